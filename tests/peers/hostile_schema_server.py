"""A real MCP server (Python `mcp` SDK) whose tools have hostile input schemas, next to one plain
tool:

- `branches`: `anyOf` nested 16 levels deep through `$defs`, each level's three branches holding
  the next level (small as JSON, combinatorial once inlined);
- `deep`: objects nested DEEP levels (the environment variable, default 90), which is twice as
  many JSON levels: deeper than serde_json decodes by default (128), within what the SDK's own
  serializer writes (it fails from about 130);
- `echo(text)`: a plain tool, which must still load and work.

With a port as its argument it serves Streamable HTTP there (its replies as server-sent events),
else stdio.
"""

import os
import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("hostile")
DEEP = int(os.environ.get("DEEP", "90"))


@server.tool()
def echo(text: str) -> str:
    """Return TEXT."""
    return text


@server.tool()
def branches() -> str:
    """Take a deeply branching value."""
    return "ok"


@server.tool()
def deep() -> str:
    """Take a deeply nested value."""
    return "ok"


def branching() -> dict:
    defs = {}
    for i in range(16):
        nxt = {"$ref": f"#/$defs/L{i + 1}"}
        defs[f"L{i}"] = {
            "anyOf": [nxt, {"type": "array", "items": nxt}, {"type": "object", "properties": {"n": nxt}}]
        }
    defs["L16"] = {"type": "string"}
    return {"type": "object", "properties": {"v": {"$ref": "#/$defs/L0"}}, "$defs": defs}


def nested(levels: int) -> dict:
    schema: dict = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


server._tool_manager.get_tool("branches").parameters = branching()
server._tool_manager.get_tool("deep").parameters = nested(DEEP)

if __name__ == "__main__":
    if len(sys.argv) > 1:
        import uvicorn

        uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
    else:
        server.run()
