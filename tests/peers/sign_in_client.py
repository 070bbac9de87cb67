"""An independent 2026-07-28 MCP client (the Python `mcp` SDK, URL-mode elicitation declared)
that runs a script whose source needs a sign-in, and signs in when the hub sends it the sign-in
page: it follows the page like a browser (the authorization endpoint, the consent form of
tests/peers/oauth_server.py, the redirect to the hub's listener), then accepts. Prints a JSON
report on stdout for tests/it/oauth.rs.

usage: sign_in_client.py COMMAND ARGS...   a stdio hub
       sign_in_client.py URL                 an HTTP hub, with the bearer token SIGN_IN_TOKEN
(SIGN_IN_SCRIPT in the environment replaces the script)
"""

import asyncio
import json
import os
import re
import sys
import urllib.parse
import urllib.request

import mcp.types as types
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

SCRIPT = os.environ.get("SIGN_IN_SCRIPT", 'return await peer.echo({ text: "hi" });')

elicitations = []


async def on_elicit(context, params):
    data = params.model_dump(by_alias=True, exclude_none=True)
    elicitations.append(data)
    if data.get("mode") != "url":
        return types.ElicitResult(action="decline")
    data["landed"] = await asyncio.to_thread(browse, data["url"])
    return types.ElicitResult(action="accept")


def browse(url):
    """What a person's browser does: open the page, press Allow, follow the redirects home."""
    with urllib.request.urlopen(url, timeout=60) as consent:
        page = consent.read().decode()
        consent_url = consent.geturl().split("?")[0]
    request_id = re.search(r"name=request value=([^>\s]+)>", page).group(1)
    form = urllib.parse.urlencode({"request": request_id}).encode()
    with urllib.request.urlopen(consent_url, data=form, timeout=60) as landed:
        return landed.read().decode()


async def main(command):
    if command[0].startswith("http"):
        headers = {"Authorization": f"Bearer {os.environ['SIGN_IN_TOKEN']}"}
        async with create_mcp_http_client(headers=headers) as http:
            hub = streamable_http_client(command[0], http_client=http)
            async with Client(hub, mode="2026-07-28", elicitation_callback=on_elicit) as client:
                result = await client.call_tool("execute", {"code": SCRIPT})
    else:
        server = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
        async with Client(server, mode="2026-07-28", elicitation_callback=on_elicit) as client:
            result = await client.call_tool("execute", {"code": SCRIPT})
    print(json.dumps({"result": result.structured_content, "elicitations": elicitations}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
