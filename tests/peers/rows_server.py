"""A real MCP server (Python `mcp` SDK) that answers with as many rows as it is asked for and
counts its calls: each call appends one line ("list 2000", "create 3", ...) to the file named by
CALLS_FILE before it answers, so a test can tell how often the provider really ran — a stored
result that is paged through must not have run it again.
"""

import os
import time
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("rows")
CALLS_FILE = os.environ["CALLS_FILE"]


def count(line: str) -> None:
    # One write(2) with O_APPEND: lines from concurrent calls never interleave.
    fd = os.open(CALLS_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


def row(i: int, width: int) -> dict:
    # Every row carries its own index so a reader can check each was seen exactly once; the
    # body holds text (with characters JSON must escape) a preview must never show.
    r = {
        "id": i,
        "subject": f"Subject {i} \u00e9\"quoted\"",
        "body": f"secret-body-{i}-" + ("x" * width),
        "labels": ["inbox", "l" + str(i % 7)],
    }
    if i % 3 == 0:
        r["starred"] = True
    return r


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def list_rows(n: int, width: int = 16) -> dict:
    """List N rows (messages), each with a body of WIDTH characters."""
    count(f"list {n}")
    return {"rows": [row(i, width) for i in range(n)], "total": n}


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def list_rows_typed(n: int) -> dict[str, Any]:
    """List N rows like list_rows, declaring an output schema (any object)."""
    count(f"typed {n}")
    return {"rows": [row(i, 64) for i in range(n)], "total": n}


@server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True))
def create_rows(n: int) -> dict:
    """Create N rows (a write) and return them."""
    count(f"create {n}")
    return {"created": [row(i, 8) for i in range(n)]}


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def big_answer(bytes: int) -> str:
    """Answer with BYTES characters of text."""
    count(f"big {bytes}")
    return "b" * bytes


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def slow_read(seconds: float) -> str:
    """Take SECONDS to answer, changing nothing."""
    count("slow")
    time.sleep(seconds)
    return "read"


if __name__ == "__main__":
    server.run()
