"""A real MCP server (Python `mcp` SDK) that connects fine and lists no tools.

The recovery tests use it: a script that calls such a source made a mistake (there is nothing to
call), rather than meeting a source that is down.
"""

from mcp.server.mcpserver import MCPServer

server = MCPServer("empty")

if __name__ == "__main__":
    server.run()
