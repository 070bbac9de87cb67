"""A real MCP server (Python `mcp` SDK) that counts how often each of its tools ran.

The counts live in the JSON file named by COUNTER_FILE, so they survive the server being
started again (each `capabilities exec` starts its sources anew). The approval tests use it to
prove that a resumed run never repeats a write.
"""

import json
import os
import threading

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("counter")
COUNTER_FILE = os.environ["COUNTER_FILE"]
# The SDK runs sync tools on worker threads, so concurrent calls would race on the file.
LOCK = threading.Lock()


def bump(name: str, key: str) -> int:
    with LOCK:
        return bump_locked(name, key)


def bump_locked(name: str, key: str) -> int:
    try:
        with open(COUNTER_FILE) as f:
            counts = json.load(f)
    except FileNotFoundError:
        counts = {}
    label = f"{name}:{key}"
    counts[label] = counts.get(label, 0) + 1
    with open(COUNTER_FILE, "w") as f:
        json.dump(counts, f)
    return counts[label]


@server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False))
def write(key: str) -> int:
    """Write KEY and return how many times it was written."""
    return bump("write", key)


@server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True))
def publish(key: str) -> int:
    """Publish KEY for everyone (destructive) and return how many times it was published."""
    return bump("publish", key)


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def counts() -> dict:
    """How many times each write and publish ran."""
    try:
        with open(COUNTER_FILE) as f:
            return json.load(f)
    except FileNotFoundError:
        return {}


if __name__ == "__main__":
    server.run()
