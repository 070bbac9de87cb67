"""A stdio MCP server that publishes the skill folders under the directory given as its first
argument through the Skills extension (SEP-2640), with fastmcp's own implementation: the real
peer the hub's upstream skills are tested against. Skills are read again on every request, so a
test can change one while the hub runs."""

import sys

from fastmcp import FastMCP
from fastmcp.server.providers.skills import SkillsDirectoryProvider
from fastmcp.skills.extension import SkillsExtension

server = FastMCP("skills-peer")
skills = SkillsDirectoryProvider(roots=sys.argv[1], reload=True, experimental_skills=True)
server.add_provider(skills)
# Declares `io.modelcontextprotocol/skills` and answers skills/list and skills/get.
server.add_extension(SkillsExtension(providers=[skills]))


@server.tool
def ping() -> str:
    """Answers pong: the peer also has a tool, as a real server would."""
    return "pong"


if __name__ == "__main__":
    server.run(show_banner=False)
