#!/usr/bin/env bash
# Installs everything the tests and the README's quick start use on a fresh Debian machine: the
# Debian packages (as root, through apt), server-everything (npm, into tests/node_modules) and the
# Python `mcp` SDK plus Python MCP servers (into .venv). Safe to run again; it only installs what
# is missing or changed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export DEBIAN_FRONTEND=noninteractive

need_apt=()
command -v node >/dev/null || need_apt+=(nodejs npm)
command -v python3 >/dev/null || need_apt+=(python3 python3-venv)
python3 -c 'import venv, ensurepip' 2>/dev/null || need_apt+=(python3-venv)
# The dashboard's end-to-end test drives it in a real terminal.
command -v tmux >/dev/null || need_apt+=(tmux)
# The approval page tests drive Debian's headless Chromium through its chromedriver.
command -v chromium >/dev/null || need_apt+=(chromium)
command -v chromedriver >/dev/null || need_apt+=(chromium-driver)
# The credential tests run a private D-Bus session with gnome-keyring's Secret Service (the real
# Linux keychain path) and check what it holds with libsecret's secret-tool.
command -v dbus-daemon >/dev/null || need_apt+=(dbus-daemon)
command -v dbus-send >/dev/null || need_apt+=(dbus-bin)
command -v gnome-keyring-daemon >/dev/null || need_apt+=(gnome-keyring)
command -v secret-tool >/dev/null || need_apt+=(libsecret-tools)
# The shared-store tests run against a real PostgreSQL server.
command -v pg_ctlcluster >/dev/null || need_apt+=(postgresql)
# A replica with its clock ahead of the others' (tests/it/shared_store.rs).
ls /usr/lib/*/faketime/libfaketime.so.1 >/dev/null 2>&1 || need_apt+=(libfaketime)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "tests/setup.sh: the tests need Debian packages that are missing; install them as root:" >&2
    echo "  apt-get update && apt-get install -y ${need_apt[*]}" >&2
    echo "then run tests/setup.sh again." >&2
    exit 1
  fi
  apt-get update -qq
  apt-get install -y -qq "${need_apt[@]}"
fi

cd "$root/tests"
# `npm ci` installs exactly the committed lock file and never rewrites it; the checksum makes
# sure of that, since a rewritten lock file would change what every later machine installs.
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules ]; then
  lock_before=$(sha256sum package-lock.json)
  npm ci --no-audit --no-fund --loglevel=error
  if [ "$(sha256sum package-lock.json)" != "$lock_before" ]; then
    echo "tests/setup.sh: npm rewrote tests/package-lock.json; restore it (git checkout tests/package-lock.json) and update it on purpose with npm install" >&2
    exit 1
  fi
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
if [ ! -x .venv-fastmcp/bin/python ]; then
  python3 -m venv .venv-fastmcp
fi
if [ ! -f .venv-fastmcp/.installed ] || [ tests/requirements-fastmcp.txt -nt .venv-fastmcp/.installed ]; then
  .venv-fastmcp/bin/pip install --quiet --disable-pip-version-check -r tests/requirements-fastmcp.txt
  touch .venv-fastmcp/.installed
fi

# PostgreSQL for the shared-store tests: the Debian cluster running, and a role that may create
# the throwaway databases the tests use (tests/it/shared_store.rs, CAPABILITIES_TEST_POSTGRES).
cluster=$(pg_lsclusters --no-header 2>/dev/null | awk 'NR == 1 { print $1 " " $2 }')
if [ -z "$cluster" ]; then
  echo "tests/setup.sh: PostgreSQL is installed but has no cluster; create one with \`pg_createcluster --start 15 main\` as root" >&2
  exit 1
fi
if ! pg_lsclusters --no-header | awk 'NR == 1 { exit $4 == "online" ? 0 : 1 }'; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "tests/setup.sh: start PostgreSQL as root: pg_ctlcluster $cluster start" >&2
    exit 1
  fi
  # shellcheck disable=SC2086 # version and cluster name, two words on purpose
  pg_ctlcluster $cluster start
fi
role_exists=$(runuser -u postgres -- psql -tAc "SELECT 1 FROM pg_roles WHERE rolname = 'capabilities'" 2>/dev/null || true)
if [ "$role_exists" != "1" ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "tests/setup.sh: create the test role as root: runuser -u postgres -- psql -c \"CREATE ROLE capabilities LOGIN PASSWORD 'capabilities' CREATEDB\"" >&2
    exit 1
  fi
  runuser -u postgres -- psql -qc "CREATE ROLE capabilities LOGIN PASSWORD 'capabilities' CREATEDB"
fi
