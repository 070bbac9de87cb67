"""An independent MCP client (the Python `mcp` SDK) that drives `capabilities hub serve --direct`
through one scenario and prints a JSON report on stdout for tests/it/direct.rs to check.

usage: direct_client.py SCENARIO HUB_BINARY COMMAND_OR_URL ARGS...

Scenarios:
- modern: a 2026-07-28 client over stdio that answers approval forms: list the tools, call
  some, one after a form, and follow `subscriptions/listen` while a source adds a tool.
- legacy: a 2025-11-25 client over stdio without elicitation: a call that needs a person
  returns the approval command, `hub approve` decides it, and the same call runs; a source
  that adds a tool brings `notifications/tools/list_changed`.
- http TOKEN: a 2026-07-28 client over Streamable HTTP with a bearer token: list the tools,
  call one, and call one that asks, answering the approval form.
- tokens URL TOKEN_A TOKEN_B: two older clients over Streamable HTTP with their own tokens send
  the same call that needs a person; `hub approve` allows the run A's call paused, B's identical
  call must ask anew, and A's then runs. Then two 2026-07-28 clients: B answers the form A's call
  got, with A's requestState, and is refused; A's answer runs the call.
- large: a 2026-07-28 client over stdio calls tools that declare an output schema and answer
  with more than the output budget; the SDK checks each answer against the schema and the
  report says what it raised, if anything.
"""

import asyncio
import json
import os
import re
import subprocess
import sys

import mcp.types as types
from mcp import Client, StdioServerParameters


def tool_result(result):
    text = "".join(c.text for c in result.content if getattr(c, "type", "") == "text")
    return {"isError": bool(result.is_error), "text": text, "structured": result.structured_content}


def dump(tool):
    return tool.model_dump(by_alias=True, exclude_none=True, mode="json")


async def bounded(awaitable, what):
    # A bound on something the hub does in the background, never a timing check.
    try:
        return await asyncio.wait_for(awaitable, 60)
    except TimeoutError:
        raise RuntimeError(f"timed out waiting for {what}") from None


async def error_of(coroutine):
    try:
        await coroutine
    except Exception as error:  # noqa: BLE001 - the report carries whatever the SDK raised
        return str(error)
    return None


async def on_elicit(context, params):
    return types.ElicitResult(action="accept", content={"decision": "allow_once"})


async def modern(command):
    server = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    report = {}
    async with Client(server, mode="2026-07-28", elicitation_callback=on_elicit) as client:
        tools = (await client.list_tools()).tools
        report["tools"] = {t.name: dump(t) for t in tools}
        report["write"] = tool_result(await client.call_tool("counter_write", {"key": "a"}))
        report["publish"] = tool_result(await client.call_tool("counter_publish", {"key": "p"}))
        report["denied"] = await error_of(client.call_tool("time_convertTime", {}))
        report["badArguments"] = tool_result(await client.call_tool("counter_write", {"key": 5}))
        report["counts"] = tool_result(await client.call_tool("counter_counts", {}))
        # A form answered with a changed requestState is refused, saying what to do instead.
        session = client.session
        first = await session.call_tool("counter_publish", {"key": "t"}, allow_input_required=True)
        state = first.request_state
        tampered = state[:-3] + ("AAA" if not state.endswith("AAA") else "BBB")
        answer = {"approval": types.ElicitResult(action="accept", content={"decision": "allow_once"})}
        report["tampered"] = await error_of(
            session.call_tool("counter_publish", {"key": "t"}, input_responses=answer, request_state=tampered)
        )
        async with client.listen(tools_list_changed=True) as subscription:
            report["added"] = tool_result(await client.call_tool("changing_addTool", {"name": "fresh"}))
            events = aiter(subscription)
            await bounded(anext(events), "a tools list_changed event")
        report["toolsAfter"] = sorted(t.name for t in (await client.list_tools()).tools)
        report["fresh"] = tool_result(await client.call_tool("changing_fresh", {}))
    return report


async def legacy(hub, command):
    server = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    report = {}
    changed = asyncio.Event()

    async def on_message(message):
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async with Client(server, mode="legacy", message_handler=on_message) as client:
        report["protocolVersion"] = client.protocol_version
        report["tools"] = sorted(t.name for t in (await client.list_tools()).tools)
        asked = tool_result(await client.call_tool("counter_publish", {"key": "q"}))
        report["asked"] = asked
        run_id = re.search(r"hub approve (\S+?)`", asked["text"]).group(1)
        report["askedAgain"] = tool_result(await client.call_tool("counter_publish", {"key": "q"}))
        approved = subprocess.run([hub, "hub", "approve", run_id], capture_output=True, text=True)
        report["approve"] = {"code": approved.returncode, "stderr": approved.stderr}
        report["afterApproval"] = tool_result(await client.call_tool("counter_publish", {"key": "q"}))
        report["askedAfterRun"] = tool_result(await client.call_tool("counter_publish", {"key": "q"}))
        report["counts"] = tool_result(await client.call_tool("counter_counts", {}))
        changed.clear()
        report["added"] = tool_result(await client.call_tool("changing_addTool", {"name": "later"}))
        # A notification sent as the sources first connected may still be on its way: each
        # one is followed by a fresh list until the new tool shows.
        for _ in range(10):
            await bounded(changed.wait(), "notifications/tools/list_changed")
            changed.clear()
            report["toolsAfter"] = sorted(t.name for t in (await client.list_tools()).tools)
            if "changing_later" in report["toolsAfter"]:
                break
    return report


async def http(url, token):
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    report = {}
    async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as client_http:
        transport = streamable_http_client(url, http_client=client_http)
        async with Client(transport, mode="2026-07-28", elicitation_callback=on_elicit) as client:
            report["tools"] = sorted(t.name for t in (await client.list_tools()).tools)
            report["hidden"] = await error_of(client.call_tool("time_getCurrentTime", {"timezone": "UTC"}))
            report["write"] = tool_result(await client.call_tool("counter_write", {"key": "h"}))
            # Asks: the form is answered and the answer runs the call.
            report["publish"] = tool_result(await client.call_tool("counter_publish", {"key": "f"}))
    return report


async def tokens(hub, url, token_a, token_b):
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def call(token):
        headers = {"Authorization": f"Bearer {token}"}
        async with create_mcp_http_client(headers=headers) as client_http:
            async with Client(streamable_http_client(url, http_client=client_http), mode="legacy") as client:
                return tool_result(await client.call_tool("ledger_write", {"key": "shared"}))

    report = {"askedA": await call(token_a)}
    run_id = re.search(r"hub approve (\S+?)`", report["askedA"]["text"]).group(1)
    approved = subprocess.run([hub, "hub", "approve", run_id], capture_output=True, text=True)
    report["approve"] = {"code": approved.returncode, "stderr": approved.stderr, "runId": run_id}
    report["askedB"] = await call(token_b)
    report["ranA"] = await call(token_a)

    # A form A's call got, answered by B with A's requestState, decides nothing; A's answer runs.
    arguments = {"key": "form"}
    allow = {"approval": types.ElicitResult(action="accept", content={"decision": "allow_once"})}

    async def modern_session(token):
        headers = {"Authorization": f"Bearer {token}"}
        client_http = create_mcp_http_client(headers=headers)
        transport = streamable_http_client(url, http_client=client_http)
        return client_http, Client(transport, mode="2026-07-28", elicitation_callback=on_elicit)

    http_a, client_a = await modern_session(token_a)
    http_b, client_b = await modern_session(token_b)
    async with http_a, http_b, client_a, client_b:
        first = await client_a.session.call_tool("ledger_write", arguments, allow_input_required=True)
        report["formAnsweredByB"] = await error_of(
            client_b.session.call_tool(
                "ledger_write", arguments, input_responses=allow, request_state=first.request_state
            )
        )
        answered = await client_a.session.call_tool(
            "ledger_write", arguments, input_responses=allow, request_state=first.request_state
        )
        report["formAnsweredByA"] = tool_result(answered)
    return report


async def large(command):
    server = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    report = {}
    async with Client(server, mode="2026-07-28") as client:
        tools = {t.name: dump(t) for t in (await client.list_tools()).tools}
        report["schemas"] = {name: tools[name].get("outputSchema") for name in ("rows_listRowsTyped", "rows_bigAnswer")}
        for key, name, arguments in (
            ("rows", "rows_listRowsTyped", {"n": 2000}),
            ("big", "rows_bigAnswer", {"bytes": 100000}),
        ):
            try:
                report[key] = tool_result(await client.call_tool(name, arguments))
            except Exception as error:  # noqa: BLE001 - the report carries what the SDK raised
                report[key] = {"raised": str(error)}
    return report


async def main(scenario, hub, rest):
    if scenario == "modern":
        report = await modern(rest)
    elif scenario == "legacy":
        report = await legacy(hub, rest)
    elif scenario == "tokens":
        report = await tokens(hub, rest[0], rest[1], rest[2])
    elif scenario == "large":
        report = await large(rest)
    else:
        report = await http(rest[0], rest[1])
    print(json.dumps(report))


asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
