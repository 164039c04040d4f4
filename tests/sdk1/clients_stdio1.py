"""The FastMCP 1 shop (tests/sdk1/clients.py) over stdio, on this venv's mcp 1.x: a subprocess server.

Uninstrumented: the 1.x client tests read the client's side. With `die` as argv[1] its tool
`die` ends the process mid-call (a server gone under a request); with `http` it serves over
Streamable HTTP on a loopback port it prints first (a server the test can kill).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from clients import shop


def main() -> None:
    server = shop()
    if sys.argv[1:] == ["die"]:

        @server.tool()
        def die() -> str:
            """Ends the server process mid-call."""
            os._exit(3)

    if sys.argv[1:] == ["http"]:
        import socket

        import uvicorn

        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(128)  # connections wait in the backlog until uvicorn accepts them
        print(sock.getsockname()[1], flush=True)
        uvicorn.Server(uvicorn.Config(server.streamable_http_app(), log_level="warning")).run(sockets=[sock])
        return
    server.run("stdio")


if __name__ == "__main__":
    main()
