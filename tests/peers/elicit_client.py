"""An independent 2026-07-28 MCP client (the Python `mcp` SDK) that answers the hub's approval
forms, and prints a JSON report on stdout for tests/it/elicitation.rs to check.

usage: elicit_client.py STATE_DATABASE COMMAND ARGS...

Scenarios, each on a script whose second call needs approval: accept (allow once), decline,
a tampered requestState, a replayed requestState, and an expired approval.
"""

import asyncio
import json
import os
import sqlite3
import sys

import mcp.types as types
from mcp import Client, StdioServerParameters

SCRIPT = """
const first = await counter.write({ key: "%(key)s-1" });
let published = null;
try { published = await counter.publish({ key: "%(key)s" }); } catch (e) { published = e.code; }
const second = await counter.write({ key: "%(key)s-2" });
return { published };
"""

choice = {"action": "accept", "decision": "allow_once"}
forms = []


async def on_elicit(context, params):
    data = params.model_dump(by_alias=True, exclude_none=True)
    forms.append(data)
    if choice["action"] != "accept":
        return types.ElicitResult(action=choice["action"])
    return types.ElicitResult(action="accept", content={"decision": choice["decision"]})


def answer(decision):
    return {"approval": types.ElicitResult(action="accept", content={"decision": decision})}


async def pending(session, key):
    result = await session.call_tool("execute", {"code": SCRIPT % {"key": key}}, allow_input_required=True)
    assert result.result_type == "input_required", result
    return result


async def error_of(coroutine):
    try:
        await coroutine
    except Exception as error:  # noqa: BLE001 - the report carries whatever the SDK raised
        return str(error)
    return None


async def main(database, command):
    server = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    report = {}
    async with Client(server, mode="2026-07-28", elicitation_callback=on_elicit) as client:
        accepted = await client.call_tool("execute", {"code": SCRIPT % {"key": "accept"}})
        report["accept"] = accepted.structured_content
        report["form"] = forms[-1]

        choice["action"] = "decline"
        declined = await client.call_tool("execute", {"code": SCRIPT % {"key": "decline"}})
        report["decline"] = declined.structured_content

        session = client.session
        first = await pending(session, "tamper")
        state = first.request_state
        tampered = state[:-3] + ("AAA" if not state.endswith("AAA") else "BBB")
        report["tampered"] = await error_of(
            session.call_tool("execute", {"code": "x"}, input_responses=answer("allow_once"), request_state=tampered)
        )

        second = await pending(session, "replay")
        done = await session.call_tool(
            "execute", {"code": "x"}, input_responses=answer("allow_once"), request_state=second.request_state
        )
        report["replay_first"] = done.structured_content
        report["replayed"] = await error_of(
            session.call_tool("execute", {"code": "x"}, input_responses=answer("deny"), request_state=second.request_state)
        )

        third = await pending(session, "expire")
        with sqlite3.connect(database) as db:
            db.execute("UPDATE approvals SET expires_at_ms = 1 WHERE decision IS NULL")
        report["expired"] = await error_of(
            session.call_tool("execute", {"code": "x"}, input_responses=answer("allow_once"), request_state=third.request_state)
        )
    print(json.dumps(report))


asyncio.run(main(sys.argv[1], sys.argv[2:]))
