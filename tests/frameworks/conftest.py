"""The agent frameworks' tests run in their own venv (scripts/test-frameworks), where they are installed.

Elsewhere (the dev venv, which does not install them) this folder is not collected.
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent))  # tests/: shop.py, transports.py

collect_ignore_glob = [] if os.environ.get("MCPOBS_FRAMEWORKS") == "1" else ["test_*.py"]
