"""Markdown table rows for the pages rendered from the registry."""

from __future__ import annotations


def cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def row(*cells: object) -> str:
    return "| " + " | ".join(cell(c) for c in cells) + " |"
