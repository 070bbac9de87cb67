"""A real MCP server (Python `mcp` SDK) over Streamable HTTP that answers the first
`server/discover` probe late.

Run as `late_http_server.py PORT DELAY`: serves http://127.0.0.1:PORT/mcp under uvicorn, and holds
the first POST that carries `server/discover` for DELAY seconds before the server sees it, as a
server on a loaded machine would. rmcp gives up on the probe after 10 s and sends `initialize`;
the probe's late answer then arrives first. Every later request goes straight through.
"""

import asyncio
import sys

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("late")


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def shout(text: str) -> str:
    """Return TEXT in capital letters."""
    return text.upper()


class LateFirstProbe:
    """ASGI middleware: reads a POST's body, holds the first probe, then replays the body."""

    def __init__(self, app, delay: float) -> None:
        self.app = app
        self.delay = delay
        self.held = False

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "POST":
            return await self.app(scope, receive, send)
        messages = []
        while True:
            message = await receive()
            messages.append(message)
            if not message.get("more_body", False):
                break
        body = b"".join(m.get("body", b"") for m in messages)
        if not self.held and b"server/discover" in body:
            self.held = True
            await asyncio.sleep(self.delay)
        pending = iter(messages)

        async def replay():
            return next(pending, None) or await receive()

        return await self.app(scope, replay, send)


def main() -> None:
    port, delay = sys.argv[1:]
    uvicorn.run(
        LateFirstProbe(server.streamable_http_app(), float(delay)),
        host="127.0.0.1",
        port=int(port),
        log_level="warning",
    )


if __name__ == "__main__":
    main()
