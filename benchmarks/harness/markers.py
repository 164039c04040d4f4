"""Generated blocks in the docs: the text between a begin and an end marker, rewritten in place.

Every benchmark that writes its results into docs/benchmarks.md or the README does it the same
way, so a hand edit outside the markers survives a rerun and a rerun inside them leaves no trace
of the last one.
"""

from __future__ import annotations

import re
from pathlib import Path


def replace_between(path: Path, markers: tuple[str, str], text: str, *, append: bool = False) -> None:
    """Rewrites what lies between the markers in `path`; without them, appends the block if
    `append`, else stops with one line naming the file and the marker."""
    begin, end = markers
    body = path.read_text()
    block = f"{begin}\n{text}{end}"
    if begin in body and end in body:
        body = re.sub(re.escape(begin) + r".*?" + re.escape(end), lambda _: block, body, flags=re.DOTALL)
    elif append:
        body = body.rstrip() + "\n\n" + block + "\n"
    else:
        raise SystemExit(f"{path} has no {begin} ... {end} markers")
    path.write_text(body)
