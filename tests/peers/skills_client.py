"""An independent 2026-07-28 MCP client that declares the Skills extension (fastmcp's client,
`SkillsClientExtension`) against a stdio hub: it lists the hub's skills, gets one, and reads its
SKILL.md through `resources/read`. Prints a JSON report on stdout for tests/it/skills.rs.

usage: skills_client.py HUB_BINARY [HUB_ARGS...]   (CAPABILITIES_HOME is passed through)
"""

import asyncio
import json
import os
import sys

from fastmcp import Client
from fastmcp.client.transports import StdioTransport
from fastmcp.skills.client import SkillsClientExtension


async def main(hub, args):
    transport = StdioTransport(command=hub, args=args, env=dict(os.environ))
    report = {}
    async with Client(transport, extensions=[SkillsClientExtension()]) as client:
        report["protocol"] = str(client.protocol_version)
        skills = await client.list_skills()
        report["skills"] = [skill.model_dump(mode="json", by_alias=True, exclude_none=True) for skill in skills]
        if skills:
            got = await client.get_skill(skills[0].uri)
            report["got"] = got.model_dump(mode="json", by_alias=True, exclude_none=True)
            contents = await client.read_resource(skills[0].uri)
            report["read"] = [getattr(c, "text", None) for c in contents]
    print(json.dumps(report))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2:]))
