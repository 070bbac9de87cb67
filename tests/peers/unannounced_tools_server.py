"""An MCP server over stdio, written as raw JSON-RPC lines, that serves tools without declaring
the `tools` capability in its `initialize` answer, as some servers do: a client that lists only
what a server declares never lists it when it connects. (Raw JSON-RPC, because the fault is in
the protocol itself, which the SDK keeps consistent.) Its
tools are read from DEFS_FILE (a JSON list of tool definitions) at every `tools/list`, so a test
can change them under a running client; every call appends `NAME ARGS` to CALLS_FILE.
"""

import json
import os
import sys

DEFS = os.environ["DEFS_FILE"]
CALLS = os.environ["CALLS_FILE"]


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    try:
        message = json.loads(line)
    except ValueError:
        continue
    method, ident = message.get("method"), message.get("id")
    if ident is None:
        continue
    if method == "initialize":
        version = message["params"].get("protocolVersion", "2025-06-18")
        send({"jsonrpc": "2.0", "id": ident, "result": {
            "protocolVersion": version, "capabilities": {},
            "serverInfo": {"name": "unannounced", "version": "1"}}})
    elif method == "tools/list":
        with open(DEFS) as defs:
            send({"jsonrpc": "2.0", "id": ident, "result": {"tools": json.load(defs)}})
    elif method == "tools/call":
        params = message["params"]
        with open(CALLS, "a") as calls:
            calls.write(f"{params['name']} {json.dumps(params.get('arguments') or {}, sort_keys=True)}\n")
        send({"jsonrpc": "2.0", "id": ident, "result": {
            "content": [{"type": "text", "text": f"ran {params['name']}"}]}})
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": ident, "result": {}})
    else:
        send({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": f"no method {method}"}})
