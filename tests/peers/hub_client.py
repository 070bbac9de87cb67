"""An independent MCP client (the Python `mcp` SDK) that drives `capabilities hub serve` through
one scenario and prints a JSON report on stdout for tests/it/hub.rs to check.

usage: hub_client.py MODE STATE_DATABASE COMMAND ARGS...

MODE is "2026-07-28" (stateless requests, no initialize) or "legacy" (the initialize handshake).
The scenario: list the tools, search until the sources are connected, describe, run a script
that calls two sources, run several scripts at once, cancel a run (checked in the hub's state
database), and send the arguments execute must refuse.
"""

import asyncio
import json
import os
import sqlite3
import sys

from mcp import Client, StdioServerParameters

MULTI_SOURCE = """
const [echo, now, sum] = await Promise.all([
  everything.echo({ message: "hello from the hub" }),
  time.getCurrentTime({ timezone: "UTC" }),
  everything.getSum({ a: 2, b: 3 }),
]);
return { echo, timezone: now.timezone, sum };
"""

# Parks until cancelled; the hub allows timers of up to 30 s.
SLEEPER = "await new Promise((resolve) => setTimeout(resolve, 29000)); return 'woke up';"


def tool_result(result):
    text = "".join(c.text for c in result.content if getattr(c, "type", "") == "text")
    return {"isError": bool(result.is_error), "text": text, "structured": result.structured_content}


def runs_with_status(database, status):
    with sqlite3.connect(database) as db:
        return [row[0] for row in db.execute("SELECT run_id FROM runs WHERE status = ?", (status,))]


async def wait_for(predicate, what):
    # A bounded wait for something the hub does in the background, never a timing check.
    for _ in range(600):
        value = predicate()
        if value:
            return value
        await asyncio.sleep(0.1)
    raise RuntimeError(f"timed out waiting for {what}")


async def main(mode, database, command):
    # The SDK passes only a few variables to the server; the hub needs CAPABILITIES_HOME.
    server = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    report = {}
    async with Client(server, mode=mode) as client:
        report["protocolVersion"] = client.protocol_version
        report["instructions"] = client.instructions
        tools = (await client.list_tools()).tools
        report["tools"] = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools]

        # Sources connect in the background; search says so until they are ready.
        searches = []
        for _ in range(600):
            result = tool_result(await client.call_tool("search", {"query": "echo a message"}))
            searches.append(result["text"])
            if "still connecting" not in result["text"]:
                break
            await asyncio.sleep(0.1)
        report["search"] = searches[-1]
        report["searchNamespace"] = tool_result(await client.call_tool("search", {"query": "", "namespace": "time"}))
        report["searchUnknown"] = tool_result(await client.call_tool("search", {"query": "x", "namespace": "nope"}))

        report["describe"] = tool_result(await client.call_tool("describe", {"targets": ["everything.echo", "time"]}))
        report["describeUnknown"] = tool_result(await client.call_tool("describe", {"targets": ["everything.ech"]}))

        report["multiSource"] = tool_result(await client.call_tool("execute", {"code": MULTI_SOURCE}))
        report["failed"] = tool_result(await client.call_tool("execute", {"code": "throw new Error('boom')"}))

        calls = [client.call_tool("execute", {"code": f"return (await everything.echo({{ message: 'n{i}' }}))"}) for i in range(8)]
        report["parallel"] = [tool_result(r) for r in await asyncio.gather(*calls)]

        sleeper = asyncio.create_task(client.call_tool("execute", {"code": SLEEPER}))
        running = await wait_for(lambda: runs_with_status(database, "running"), "the sleeping run to start")
        sleeper.cancel()
        try:
            await sleeper
        except asyncio.CancelledError:
            pass
        cancelled = await wait_for(lambda: set(running) & set(runs_with_status(database, "cancelled")), "the run to be cancelled")
        report["cancelledRuns"] = sorted(cancelled)
        report["afterCancel"] = tool_result(await client.call_tool("execute", {"code": "return 40 + 2"}))

        report["both"] = tool_result(await client.call_tool("execute", {"code": "return 1", "resume": "run_x"}))
        report["neither"] = tool_result(await client.call_tool("execute", {}))
        report["resume"] = tool_result(await client.call_tool("execute", {"resume": "run_x"}))
    print(json.dumps(report))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
