"""tests/peers/counter_server.py with a write log, for the load benchmark.

counter_server's `bump` rewrites one JSON file of every count on each write: fine for the tests,
but at load-test volumes (tens of thousands of keys) each write would cost more than the last.
This serves the same server (tools, annotations, SDK) with only `bump` replaced: each write
appends one `write:KEY` line to COUNTER_FILE under a lock, so the file is a complete record of
every time the tool body ran, at a constant cost per write.
"""

import os
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests", "peers"))

import counter_server  # noqa: E402

LOCK = threading.Lock()
COUNTS: dict[str, int] = {}


def bump(name: str, key: str) -> int:
    label = f"{name}:{key}"
    with LOCK:
        with open(counter_server.COUNTER_FILE, "a") as f:
            f.write(label + "\n")
        COUNTS[label] = COUNTS.get(label, 0) + 1
        return COUNTS[label]


# `write` and `publish` look `bump` up in their module when they run.
counter_server.bump = bump

if __name__ == "__main__":
    counter_server.server.run()
