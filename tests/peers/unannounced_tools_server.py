"""An MCP server over stdio, written as raw JSON-RPC lines, that serves tools without declaring
the `tools` capability in its `initialize` answer, as some servers do: a client that lists only
what a server declares never lists it when it connects. (Raw JSON-RPC, because the fault is in
the protocol itself, which the SDK keeps consistent.) Its
tools are read from DEFS_FILE (a JSON list of tool definitions) at every `tools/list`, so a test
can change them under a running client; every call appends `NAME ARGS` to CALLS_FILE.
"""

import json
import os

from raw_mcp import serve

DEFS = os.environ["DEFS_FILE"]
CALLS = os.environ["CALLS_FILE"]


def tools():
    with open(DEFS) as defs:
        return json.load(defs)


def call(name, arguments):
    with open(CALLS, "a") as calls:
        calls.write(f"{name} {json.dumps(arguments, sort_keys=True)}\n")
    return f"ran {name}"


serve("unannounced", {}, tools, call)
