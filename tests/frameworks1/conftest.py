"""The mcp 1.x agent frameworks' tests run in their own venv (scripts/test-frameworks1), where they are installed.

Elsewhere this folder is not collected.
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "sdk1"))  # tests/sdk1: clients.py (the 2.3 servers)

# mcp-use reports usage to PostHog and Scarf unless told not to: nothing leaves loopback in the tests.
os.environ["MCP_USE_ANONYMIZED_TELEMETRY"] = "false"

collect_ignore_glob = [] if os.environ.get("MCPOBS_FRAMEWORKS1") == "1" else ["test_*.py"]
