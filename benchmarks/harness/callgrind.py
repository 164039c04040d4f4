"""Counting instructions: callgrind's client requests inside a worker, and the worker run under callgrind.

Instruction counts do not move with a noisy neighbour, so they are what versions are compared
with. A worker runs under `valgrind --tool=callgrind --instr-atstart=no`: start-up runs
uninstrumented, and the worker itself starts the counts, zeroes them and dumps them around
what it measures, one dump file per measured stretch.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

UNDER_CALLGRIND = "MCPOBS_BENCH_UNDER_CALLGRIND"
"""Set in a worker's environment when it runs under callgrind: it then sends the client requests."""


class Callgrind:
    """Callgrind's client requests, without a compiler: the few bytes valgrind.h would emit.

    Under `valgrind --tool=callgrind --instr-atstart=no` start-up runs uninstrumented (about
    ten times faster) and only the measured calls are counted. The sequence is valgrind's
    documented x86-64 client-request preamble; natively it does nothing and returns 0.
    """

    _CODE = bytes.fromhex(
        "4889f8"  # mov rax, rdi: the request block
        "31d2"  # xor edx, edx: the answer when not under valgrind
        "48c1c703"
        "48c1c70d"
        "48c1c73d"
        "48c1c733"  # rol rdi by 3, 13, 61, 51: 128 bits, a no-op
        "4887db"  # xchg rbx, rbx: the request itself
        "4889d0"  # mov rax, rdx
        "c3"  # ret
    )
    _BASE = (ord("C") << 24) | (ord("T") << 16)  # VG_USERREQ_TOOL_BASE('C','T') in callgrind.h
    DUMP, ZERO, START, STOP = 0, 1, 4, 5

    def __init__(self) -> None:
        import ctypes
        import mmap

        self._page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        self._page.write(self._CODE)
        address = ctypes.addressof(ctypes.c_char.from_buffer(self._page))
        self._call = ctypes.CFUNCTYPE(ctypes.c_uint64, ctypes.c_void_p)(address)
        self._block = (ctypes.c_uint64 * 6)()
        self._ctypes = ctypes

    def __call__(self, *requests: int) -> None:
        for request in requests:
            self._block[0] = self._BASE + request
            self._call(self._ctypes.addressof(self._block))


def client() -> Callgrind | None:
    """The client requests when this process runs under callgrind, else None (nothing to send)."""
    return Callgrind() if os.environ.get(UNDER_CALLGRIND) else None


def require_valgrind() -> None:
    """Stops with one line when valgrind is missing, before any worker starts."""
    if shutil.which("valgrind") is None:
        sys.exit("--instructions needs valgrind on PATH (e.g. apt-get install valgrind)")


def counted(cmd: list[str], env: dict[str, str], what: str) -> tuple[str, list[int]]:
    """Runs the worker `cmd` under callgrind: its stderr, and each dump's instruction total in order."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cg.out"
        valgrind = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}"]
        done = subprocess.run(valgrind + cmd, capture_output=True, text=True, env={**env, UNDER_CALLGRIND: "1"})
        if done.returncode != 0:
            raise RuntimeError(f"{what} failed under callgrind:\n{done.stderr[-3000:]}")
        totals: list[int] = []
        while (part := Path(f"{out}.{len(totals) + 1}")).exists():
            found = re.search(r"^totals: (\d+)", part.read_text(), re.MULTILINE)
            if found is None:
                raise RuntimeError(f"callgrind wrote no totals in dump {len(totals) + 1} for {what}")
            totals.append(int(found[1]))
    return done.stderr, totals


def counted_once(cmd: list[str], env: dict[str, str], what: str) -> tuple[str, int]:
    """`counted` for a worker that dumps once, after its calls: its stderr and that dump's total."""
    stderr, totals = counted(cmd, env, what)
    if len(totals) != 1:
        raise RuntimeError(f"callgrind did not dump exactly once, after the calls, for {what}")
    return stderr, totals[0]


def per_call(cmd: list[str], env: dict[str, str], what: str, calls: int) -> dict:
    """A worker that dumps once after `calls` calls: its answer, with `instructions` per call added."""
    from harness.workers import result

    stderr, total = counted_once(cmd, env, what)
    found = result(stderr)
    found["instructions"] = total / calls
    return found
