"""A real MCP server (Python `mcp` SDK) that checks it was given a credential, without ever
knowing the credential itself: it gets only its SHA-256 (`CANARY_SHA256`), so nothing it prints
can leak the value.

    canary_server.py stdio        the credential arrives in the environment (`CANARY_TOKEN`)
    canary_server.py http PORT    the credential arrives as `Authorization: Bearer …` on every
                                  request; a request without it gets 401 and never reaches MCP

Tools: `whoami` says whether the credential matched; `leak` fails with an error message that
contains the credential (an upstream that echoes its token), for the redaction tests; `echo`
returns its text.
"""

import hashlib
import os
import sys

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError

EXPECTED = os.environ.get("CANARY_SHA256", "")


def matches(token: str | None) -> bool:
    return token is not None and hashlib.sha256(token.encode()).hexdigest() == EXPECTED


server = MCPServer("canary")


@server.tool()
def whoami() -> str:
    """Say whether this server was given the expected credential."""
    if len(sys.argv) > 1 and sys.argv[1] == "http":
        # The middleware already refused every request without it.
        return "authorized by header"
    return "authorized by env" if matches(os.environ.get("CANARY_TOKEN")) else "unauthorized"


@server.tool()
def leak(kind: str) -> str:
    """Fail with an error that echoes the credential, as a careless server might: a tool error
    (`kind = "tool"`, an isError result) or a JSON-RPC error (`kind = "protocol"`)."""
    message = f"upstream rejected token {os.environ.get('CANARY_TOKEN', '')}"
    if kind == "protocol":
        raise MCPError(-32000, message)
    raise ToolError(message)


@server.tool()
def echo(text: str) -> str:
    """Return the text."""
    return text


def require_bearer(app):
    async def guarded(scope, receive, send):
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            value = headers.get(b"authorization", b"").decode()
            token = value[len("Bearer "):] if value.startswith("Bearer ") else None
            if not matches(token):
                await send({"type": "http.response.start", "status": 401, "headers": [(b"content-type", b"text/plain")]})
                await send({"type": "http.response.body", "body": b"missing or wrong Authorization header"})
                return
        await app(scope, receive, send)

    return guarded


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "http":
        app = require_bearer(server.streamable_http_app())
        uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
    else:
        server.run()
