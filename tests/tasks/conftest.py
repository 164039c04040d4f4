"""The tasks tests run in their own venv (fastmcp 4.1.4 + fastmcp-tasks 4.1.4, scripts/test-tasks),
where fastmcp-tasks is installed: MCPOBS_TASKS=1 collects them.

Elsewhere (the dev venv, on fastmcp 4.2.x, for which no fastmcp-tasks exists) this folder is not collected.
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent))  # tests/: transports.py

collect_ignore_glob = [] if os.environ.get("MCPOBS_TASKS") == "1" else ["test_*.py"]
