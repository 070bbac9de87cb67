#!/usr/bin/env bash
# Installs the real MCP peers the tests and the README's quick start use: server-everything
# (npm, into tests/node_modules) and the Python `mcp` SDK plus Python MCP servers (into .venv).
# Safe to run again; it only installs what is missing or changed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root/tests"
if [ ! -d node_modules ] || [ package.json -nt node_modules ]; then
  npm install --no-audit --no-fund --loglevel=error
  touch node_modules
fi
cd "$root"
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
if [ ! -f .venv/.installed ] || [ tests/requirements.txt -nt .venv/.installed ]; then
  .venv/bin/pip install --quiet --disable-pip-version-check -r tests/requirements.txt
  touch .venv/.installed
fi
