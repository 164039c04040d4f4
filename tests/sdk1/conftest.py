"""The mcp 1.x line's tests run in their own venvs (scripts/test-sdk1), where mcp 1.x is installed.

Elsewhere (the dev venv, on mcp 2.x) this folder is not collected.
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))  # tests/sdk1: its own servers and transports

collect_ignore_glob = [] if os.environ.get("MCPOBS_SDK1") == "1" else ["test_*.py"]

if os.environ.get("MCPOBS_SDK1") == "1":
    from transports1 import telemetry  # noqa: F401  # the server tests' fixture (tests/sdk1/transports1.py)
