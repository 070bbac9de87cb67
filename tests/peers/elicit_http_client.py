"""An independent 2026-07-28 MCP client (the Python `mcp` SDK) that proves approvals over
Streamable HTTP are stateless: hub A is asked to run a script whose second call needs approval
and answers with an `input_required` form; the answer goes to hub B, another process sharing
only the state store, which must accept it once and finish the run; "always" from a client with a
token is refused, and its form does not offer it. Prints a JSON report on
stdout for tests/it/elicitation.rs to check.

usage: elicit_http_client.py URL_A URL_B TOKEN   URL_B "-": only ask hub A, and report what it
answered (the envelope, the form's state); URL_B "answer:STATE": only answer hub A's form STATE
with "allow_once", and report the error
"""

import asyncio
import json
import sys

import mcp.types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

SCRIPT = """
const first = await counter.write({ key: "http-1" });
const published = await counter.publish({ key: "http" });
return { first, published };
"""


async def never_called(context, params):
    raise AssertionError("hub A's form must come back as input_required, not be answered here")


def answer(decision):
    return {"approval": types.ElicitResult(action="accept", content={"decision": decision})}


async def error_of(coroutine):
    try:
        await coroutine
    except Exception as error:  # noqa: BLE001 - the report carries whatever the SDK raised
        return str(error)
    return None


async def main(url_a, url_b, token):
    headers = {"Authorization": f"Bearer {token}"}
    report = {}
    async with create_mcp_http_client(headers=headers) as http:
        if url_b.startswith("answer:"):
            async with Client(
                streamable_http_client(url_a, http_client=http), mode="2026-07-28", elicitation_callback=never_called
            ) as hub_a:
                report["answered"] = await error_of(
                    hub_a.session.call_tool(
                        "execute", {"code": "x"}, input_responses=answer("allow_once"), request_state=url_b[7:]
                    )
                )
            print(json.dumps(report))
            return
        async with Client(
            streamable_http_client(url_a, http_client=http), mode="2026-07-28", elicitation_callback=never_called
        ) as hub_a:
            asked = await hub_a.session.call_tool("execute", {"code": SCRIPT}, allow_input_required=True)
            report["asked"] = asked.result_type
            report["form"] = asked.model_dump(mode="json", by_alias=True, exclude_none=True).get("inputRequests")
            state = getattr(asked, "request_state", None)
            if url_b == "-":
                report["envelope"] = getattr(asked, "structured_content", None)
                report["state"] = state
                print(json.dumps(report))
                return
        async with Client(
            streamable_http_client(url_b, http_client=http), mode="2026-07-28", elicitation_callback=never_called
        ) as hub_b:
            # A token's client may not write a lasting rule; the state stays good for an answer
            # it may give.
            report["always"] = await error_of(
                hub_b.session.call_tool(
                    "execute", {"code": "x"}, input_responses=answer("allow_always"), request_state=state
                )
            )
            done = await hub_b.session.call_tool(
                "execute", {"code": "x"}, input_responses=answer("allow_once"), request_state=state
            )
            report["done"] = done.structured_content
            report["replayed"] = await error_of(
                hub_b.session.call_tool(
                    "execute", {"code": "x"}, input_responses=answer("allow_once"), request_state=state
                )
            )
    print(json.dumps(report))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
