"""A real MCP server (Python `mcp` SDK) that records every write it performs as one line in the
file named by LEDGER_FILE, appended with O_APPEND the moment the write happens (before it
answers), so the line is there even when the caller dies before the answer. The guarantee tests
count those lines: a write that reached this server twice shows up twice, whichever processes
sent it.
"""

import os
import time

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("ledger")
LEDGER_FILE = os.environ["LEDGER_FILE"]
# Set per connection, so a line says which connection a write went out on.
TAG = os.environ.get("LEDGER_TAG")


def append(line: str) -> None:
    if TAG:
        line = f"{line} via {TAG}"
    # One write(2) of one line with O_APPEND: lines from concurrent processes never interleave.
    fd = os.open(LEDGER_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


def lines() -> list:
    try:
        with open(LEDGER_FILE) as f:
            return [line.rstrip("\n") for line in f]
    except FileNotFoundError:
        return []


@server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True))
def write(key: str) -> str:
    """Write KEY (destructive); returns what was written."""
    append(f"write {key}")
    return f"wrote {key}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True))
def slow_write(key: str, seconds: float) -> str:
    """Write KEY at once, then take SECONDS to answer."""
    append(f"write {key}")
    time.sleep(seconds)
    return f"wrote {key}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def slow_read(seconds: float) -> str:
    """Take SECONDS to answer, changing nothing (the ledger notes that a read arrived)."""
    append("read")
    time.sleep(seconds)
    return "read"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def entries() -> list:
    """Every line written so far."""
    return lines()


if __name__ == "__main__":
    server.run()
