"""A real MCP server (Python `mcp` SDK) whose tool list changes at run time.

Calling `add_tool` registers a new tool and announces it: to 2026-07-28 clients through
`subscriptions/listen`, to older clients with `notifications/tools/list_changed`. The tests use it
to check that the hub lists a source again when told to.
"""

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("changing")


@server.tool()
async def add_tool(name: str, ctx: Context) -> str:
    """Register a new tool called NAME and tell clients that the tool list changed."""

    def added() -> str:
        return f"{name} ran"

    server.add_tool(added, name=name, description=f"A tool added at run time: {name}")
    for notify in (ctx.notify_tools_changed, ctx.session.send_tool_list_changed):
        try:
            await notify()
        except Exception:  # noqa: BLE001 - each era supports one of the two
            pass
    return "added"


if __name__ == "__main__":
    server.run()
