"""The written outputs: the raw numbers as JSON, and prose for the generated docs blocks."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any


def save_json(path: Path, data: Any, indent: int = 1) -> None:
    """Writes `data` to `path` (its folder made), rewritten whole, so a run cut short leaves what it had."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=indent) + "\n")


def paragraph(text: str) -> str:
    """Markdown prose wrapped at 100 columns, links and code unbroken."""
    return textwrap.fill(text, 100, break_on_hyphens=False, break_long_words=False)
