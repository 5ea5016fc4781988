#!/usr/bin/env bash
# make compat: start bin/sibyl on a free loopback port with a fresh data
# directory, run compat.py against it with Debian's Python driver and its
# LZ4 module (installed here if missing), then stop the node with SIGTERM and check
# that it drained and exited cleanly.
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=/usr/bin/python3
if ! "$PY" -c 'import cassandra, lz4' 2>/dev/null; then
	echo "compat: installing python3-cassandra and python3-lz4"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-cassandra python3-lz4 >/dev/null
fi
free_port() { "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free_port)
admin_port=$(free_port)
data=$(mktemp -d)
log="$data/server.log"
bin/sibyl server --data-dir "$data/node" --native-transport-port "$port" --admin-port "$admin_port" >"$log" 2>&1 &
pid=$!
cleanup() {
	if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
	rm -rf "$data"
}
trap cleanup EXIT
for _ in $(seq 100); do
	if "$PY" -c "import socket; socket.create_connection(('127.0.0.1', $port), 0.2)" 2>/dev/null; then break; fi
	if ! kill -0 "$pid" 2>/dev/null; then echo "compat: the server exited:"; cat "$log"; exit 1; fi
	sleep 0.1
done
rc=0
"$PY" -W ignore test/compat/compat.py 127.0.0.1 "$port" || rc=$?
kill -TERM "$pid"
if ! wait "$pid"; then
	echo "compat: the server did not exit cleanly on SIGTERM:"
	cat "$log"
	rc=1
fi
if [ "$rc" -ne 0 ]; then
	echo "compat: server log:"
	cat "$log"
fi
exit "$rc"
