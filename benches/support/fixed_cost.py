"""The fixed cost of one `execute`, as a client over stdio sees it, beside a direct call.

Speaks raw JSON-RPC lines (no SDK in the way) to either server-everything itself (`direct`: one
`echo` call) or `capabilities hub serve` with server-everything as its one source (`empty`: an
`execute` of `return 1`; `echo`: an `execute` that calls `everything.echo` once), and prints the
median, 10th and 90th percentile of N sequential requests after a warm-up. Run from the
repository root after `cargo build --release` and `tests/setup.sh`:

    python3 benches/support/fixed_cost.py direct 1500
    python3 benches/support/fixed_cost.py empty 1500
    python3 benches/support/fixed_cost.py echo 1500

Alternate the kinds a few times: the machine is shared, so compare medians of the same moment.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EVERYTHING = os.path.join(
    ROOT, "tests/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
)
HUB = os.environ.get("CAPABILITIES_BIN", os.path.join(ROOT, "target/release/capabilities"))


def hub_home(directory):
    """A private home whose one source is server-everything, every tool allowed."""
    with open(os.path.join(directory, "config.toml"), "w") as config:
        config.write(
            f'[sources.everything]\ncommand = "node"\nargs = [{json.dumps(EVERYTHING)}, "stdio"]\n\n'
            '[policy]\ndefault = "allow"\ndestructive = "allow"\n'
        )
    return directory


class Peer:
    def __init__(self, command, env):
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            bufsize=1,
            env=env,
        )
        self.next_id = 0

    def send(self, message):
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise SystemExit(f"the server closed its output during `{method}`")
            message = json.loads(line)
            if message.get("id") == self.next_id:
                return message

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=10)


def main():
    kind, count = sys.argv[1], int(sys.argv[2])
    calls = {
        "direct": ("echo", {"message": "hi"}),
        "empty": ("execute", {"code": "return 1"}),
        "echo": ("execute", {"code": "return await everything.echo({ message: 'hi' })"}),
    }
    if kind not in calls:
        raise SystemExit(f"the kind is one of {', '.join(calls)}, not `{kind}`")
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ)
        if kind == "direct":
            command = ["node", EVERYTHING, "stdio"]
        else:
            command = [HUB, "hub", "serve"]
            env["CAPABILITIES_HOME"] = hub_home(home)
            env.pop("CAPABILITIES_CONFIG", None)
        peer = Peer(command, env)
        peer.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "fixed-cost", "version": "1"},
            },
        )
        peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        name, arguments = calls[kind]
        call = lambda: peer.request("tools/call", {"name": name, "arguments": arguments})
        first = call()
        if "error" in first or first["result"].get("isError"):
            raise SystemExit(f"the first call failed: {first}")
        for _ in range(50):
            call()
        times = []
        for _ in range(count):
            started = time.perf_counter()
            call()
            times.append((time.perf_counter() - started) * 1e3)
        peer.close()
    times.sort()
    print(
        f"{kind}: median {statistics.median(times):.3f} ms, "
        f"p10 {times[len(times) // 10]:.3f} ms, p90 {times[9 * len(times) // 10]:.3f} ms (n={count})"
    )


if __name__ == "__main__":
    main()
