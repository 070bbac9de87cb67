"""An independent MCP client (the Python `mcp` SDK) for tests/it/logging.rs: it starts
`capabilities hub serve` with the hub's stderr going to a file, searches until the sources are
connected, runs one script, and prints a JSON report on stdout: the last search's text and the
script's envelope. The test then reads the hub's log lines from the file.

usage: logging_client.py MODE STDERR_FILE SCRIPT COMMAND ARGS...

MODE is "legacy" (the initialize handshake) or a modern protocol version such as "2026-07-28".
"""

import asyncio
import json
import os
import sys

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client


def text_of(result):
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def main(mode, stderr_path, script, command):
    # The SDK passes only a few variables to the server; the hub needs CAPABILITIES_HOME and
    # the logging variables.
    server = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    with open(stderr_path, "w") as errlog:
        async with Client(stdio_client(server, errlog=errlog), mode=mode) as client:
            # Sources connect in the background; search says so until they are ready.
            for _ in range(600):
                search = text_of(await client.call_tool("search", {"query": "echo a message"}))
                if "still connecting" not in search:
                    break
                await asyncio.sleep(0.1)
            executed = await client.call_tool("execute", {"code": script})
    print(json.dumps({"search": search, "execute": executed.structured_content}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]))
