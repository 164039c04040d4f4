"""The agent frameworks' tests run in their own venvs (scripts/test-frameworks), where they are installed.

MCPOBS_FRAMEWORKS=1 collects test_agent_frameworks.py (the shared venv), =adk collects
test_google_adk.py (google-adk pins an older OpenTelemetry: a venv of its own). Elsewhere (the
dev venv, which installs none of them) this folder is not collected.
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))  # agreement.py
sys.path.insert(0, str(Path(__file__).parent.parent))  # tests/: shop.py, transports.py

_ONLY = {"1": "test_agent_frameworks.py", "adk": "test_google_adk.py"}.get(os.environ.get("MCPOBS_FRAMEWORKS", ""))
collect_ignore_glob = [name for name in ("test_agent_frameworks.py", "test_google_adk.py") if name != _ONLY]
