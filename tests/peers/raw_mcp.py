"""An MCP server's side of stdio in raw JSON-RPC lines, on the standard library alone: for the
peers whose fault is in the protocol itself (which the SDK keeps consistent), and for those that
run where the test venv cannot be reached.

serve(name, capabilities, tools, call) answers `initialize` with `capabilities`, `tools/list`
with `tools()` and `tools/call` with `call(name, arguments)` (the text of its one content
block), and `ping`; anything else is an unknown method.
"""

import json
import sys


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def serve(name, capabilities, tools, call):
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
                "protocolVersion": version, "capabilities": capabilities,
                "serverInfo": {"name": name, "version": "1"}}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": ident, "result": {"tools": tools()}})
        elif method == "tools/call":
            params = message["params"]
            text = call(params["name"], params.get("arguments") or {})
            send({"jsonrpc": "2.0", "id": ident, "result": {
                "content": [{"type": "text", "text": text}]}})
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": ident, "result": {}})
        else:
            send({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": f"no method {method}"}})
