"""An independent MCP client (the Python `mcp` SDK) that drives `capabilities hub serve --http`
and prints a JSON report on stdout for tests/it/hub_http.rs to check.

usage: hub_http_client.py URL MODE TOKEN [SCRIPT | resume:RUN_ID]

MODE is "2026-07-28" (stateless requests) or "legacy" (initialize, then a session). TOKEN is the
bearer token to send, or "-" to send none. The scenario: list the tools, then run a script that
calls an allowed tool and one the token may not allow (or run SCRIPT instead, or resume the run
RUN_ID with `execute({ resume })`), and search and
describe the tool the token may not call ("search", "describe": their texts). A refused
connection is reported as {"refused": "<error text>"} instead of failing the script. The report
lists the session ids the hub handed out ("sessionIds"), so a test can check that no answer
repeats one.
"""

import asyncio
import json
import sys

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

SCRIPT = """
const echo = await everything.echo({ message: "over http" });
let sum;
try {
  // Looked up by a computed name, so the check before the run leaves it to the call.
  sum = await everything["getSum"]({ a: 2, b: 3 });
} catch (e) {
  sum = { refused: e.code, message: e.message };
}
const found = await hub.search("add two numbers");
return { echo, sum, found, tools: Object.keys(everything) };
"""


def tool_result(result):
    text = "".join(c.text for c in result.content if getattr(c, "type", "") == "text")
    return {"isError": bool(result.is_error), "text": text, "structured": result.structured_content}


def error_text(error):
    # anyio wraps transport failures in exception groups; the report wants the innermost text.
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return f"{type(error).__name__}: {error}"


async def main(url, mode, token, script):
    headers = {} if token == "-" else {"Authorization": f"Bearer {token}"}
    report = {"sessionIds": []}

    async def note_session(response):
        session = response.headers.get("mcp-session-id")
        if session and session not in report["sessionIds"]:
            report["sessionIds"].append(session)

    try:
        async with create_mcp_http_client(headers=headers) as http:
            http.event_hooks["response"].append(note_session)
            async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
                report["protocolVersion"] = client.protocol_version
                report["tools"] = sorted(t.name for t in (await client.list_tools()).tools)
                arguments = (
                    {"resume": script[len("resume:"):]} if script.startswith("resume:") else {"code": script}
                )
                report["execute"] = tool_result(await client.call_tool("execute", arguments))
                report["search"] = tool_result(await client.call_tool("search", {"query": "add two numbers"}))
                report["describe"] = tool_result(
                    await client.call_tool("describe", {"targets": ["everything.getSum"]})
                )
    except Exception as error:  # noqa: BLE001 - the refusal is what some scenarios check
        report["refused"] = error_text(error)
    print(json.dumps(report))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else SCRIPT))
