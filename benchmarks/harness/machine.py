"""The line that names what the numbers were measured on: when, the CPU, and every version that matters."""

from __future__ import annotations

import os
import platform
import subprocess
import time
from importlib import metadata
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent


def version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def machine() -> str:
    """The line that names what the numbers were measured on."""
    cpu = platform.processor() or platform.machine()
    with open("/proc/cpuinfo") if Path("/proc/cpuinfo").exists() else open(os.devnull) as info:
        for line in info:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    commit = subprocess.run(
        ["git", "-C", str(BENCHMARKS), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return (
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {cpu}, {os.cpu_count()} cores; "
        f"Python {platform.python_version()}; mcp {version('mcp')}; opentelemetry-sdk {version('opentelemetry-sdk')}; "
        f"sentry-sdk {version('sentry-sdk')}; fastmcp {version('fastmcp')}; mcpobs {commit.stdout.strip() or '?'}"
    )
