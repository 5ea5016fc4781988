#!/usr/bin/env bash
# make compat: start bin/sibyl on a free loopback port with a fresh data
# directory, run compat.py against it with Debian's Python driver and its
# LZ4 module and integrity.js with the DataStax Node.js driver, render a
# `sibyl stress --plot` page with Debian's headless chromium and check the
# screenshot is not blank (all installed here if missing); on a three-node
# cluster, the drivers' view of it and the admin dashboard (dashboard.js,
# headless chromium over the DevTools protocol); then stop the
# node with SIGTERM, check that it drained and exited cleanly, and start it
# again for integrity.js to find everything it wrote; then a node with
# password authentication and permissions, through the Python driver and
# gocql's own authentication test; then one with TLS, through the Python
# driver and gocql's tests with -runssl.
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=/usr/bin/python3
CHROMIUM=/usr/bin/chromium-headless-shell
if ! "$PY" -c 'import cassandra, lz4' 2>/dev/null || [ ! -x "$CHROMIUM" ]; then
	echo "compat: installing python3-cassandra, python3-lz4 and chromium-headless-shell"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-cassandra python3-lz4 chromium-headless-shell >/dev/null
fi
# The Node.js driver, from the npm registry, kept between runs.
NODE_DRIVER=cassandra-driver@4.10.0
NPM_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/sibyl-compat-npm"
if [ ! -f "$NPM_DIR/node_modules/cassandra-driver/package.json" ] ||
	! grep -q '"version": "4.10.0"' "$NPM_DIR/node_modules/cassandra-driver/package.json"; then
	echo "compat: installing $NODE_DRIVER from the npm registry"
	mkdir -p "$NPM_DIR"
	npm install --no-audit --no-fund --loglevel=error --prefix "$NPM_DIR" "$NODE_DRIVER" >/dev/null
fi
export NODE_PATH="$NPM_DIR/node_modules"
free_port() { "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# await PORT PID LOG WHAT: wait up to 10 s for a server to listen on PORT;
# if its process ends first, print its log and stop.
await() {
	for _ in $(seq 100); do
		if "$PY" -c "import socket; socket.create_connection(('127.0.0.1', $1), 0.2)" 2>/dev/null; then return; fi
		if ! kill -0 "$2" 2>/dev/null; then echo "compat: $4:"; cat "$3"; exit 1; fi
		sleep 0.1
	done
}
port=$(free_port)
admin_port=$(free_port)
data=$(mktemp -d)
log="$data/server.log"
bin/sibyl server --data-dir "$data/node" --native-transport-port "$port" --admin-port "$admin_port" >"$log" 2>&1 &
pid=$!
cleanup() {
	if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
	bin/sibyl cluster down --dir "$data/cluster" >/dev/null 2>&1 || true
	rm -rf "$data"
}
trap cleanup EXIT
await "$port" "$pid" "$log" "the server exited"
rc=0
"$PY" -W ignore test/compat/compat.py 127.0.0.1 "$port" || rc=$?
node test/compat/integrity.js 127.0.0.1 "$port" write || rc=1
# The stress report opens in a browser with no network: a short run's page,
# rendered headless, shows its charts.
if bin/sibyl stress write --port "$port" --keyspace plot --duration 3s --rate 2000 --plot "$data/plot.html" >"$data/stress.log" 2>&1; then
	"$CHROMIUM" --no-sandbox --disable-gpu --window-size=1000,1400 --screenshot="$data/plot.png" "file://$data/plot.html" >/dev/null 2>&1 || true
	if [ ! -s "$data/plot.png" ]; then
		echo "compat: chromium wrote no screenshot of the stress plot"
		rc=1
	elif ! "$PY" test/compat/plot_check.py "$data/plot.png"; then
		rc=1
	fi
else
	echo "compat: sibyl stress failed:"
	cat "$data/stress.log"
	rc=1
fi
# A three-node cluster (sibyl cluster up on 127.0.0.1 to .3), with the
# Python driver's token-aware routing, the Node.js driver's view of its
# hosts and of schema changes made through another node, then with one
# node stopped, then the Node.js driver's view of a fourth node added.
cdir="$data/cluster"
cport=$(free_port)
cadmin=$(free_port)
cluster_args=(--dir "$cdir")
if bin/sibyl cluster up --nodes 3 "${cluster_args[@]}" --native-transport-port "$cport" --admin-port "$cadmin" \
	--gossip-port "$(free_port)" --storage-port "$(free_port)" >"$data/cluster.log" 2>&1; then
	"$PY" -W ignore test/compat/cluster.py 127.0.0.1 "$cport" all-up || rc=1
	"$PY" -W ignore test/compat/tracing.py 127.0.0.1 "$cport" || rc=1
	node test/compat/cluster_events.js "$cport" || rc=1
	# The admin dashboard in headless chromium: it loads from the running
	# cluster, its plots draw, and it shows node3 down once dashboard.js
	# stops it.
	if node test/compat/dashboard.js "http://127.0.0.1:$cadmin/" "$cport" bin/sibyl "$cdir" "$data/dashboard.png"; then
		# The three nodes' colours, in the ring and the plots.
		"$PY" test/compat/plot_check.py "$data/dashboard.png" 2563eb d97706 059669 || rc=1
	else
		rc=1
		bin/sibyl cluster stop node3 "${cluster_args[@]}" >>"$data/cluster.log" 2>&1 || true
	fi
	"$PY" -W ignore test/compat/cluster.py 127.0.0.1 "$cport" one-down || rc=1
	# A bootstrap streams from the nodes giving up ranges: node3 must be back.
	bin/sibyl cluster start node3 "${cluster_args[@]}" >>"$data/cluster.log" 2>&1 || rc=1
	node test/compat/cluster_events.js "$cport" add bin/sibyl "$cdir" || rc=1
else
	echo "compat: sibyl cluster up failed:"
	cat "$data/cluster.log"
	rc=1
fi
bin/sibyl cluster down "${cluster_args[@]}" >>"$data/cluster.log" 2>&1 || true
kill -TERM "$pid"
if ! wait "$pid"; then
	echo "compat: the server did not exit cleanly on SIGTERM:"
	cat "$log"
	rc=1
fi
# The same node again: everything integrity.js wrote is there as written.
bin/sibyl server --data-dir "$data/node" --native-transport-port "$port" --admin-port "$admin_port" >>"$log" 2>&1 &
pid=$!
await "$port" "$pid" "$log" "the server did not start again"
node test/compat/integrity.js 127.0.0.1 "$port" check || rc=1
kill -TERM "$pid"
wait "$pid" || rc=1
# A node with PasswordAuthenticator and CassandraAuthorizer: the Python
# driver's PlainTextAuthProvider (auth.py), and gocql's own authentication
# test (its -runauth run) from the module cache.
aport=$(free_port)
alog="$data/auth.log"
printf 'authenticator: PasswordAuthenticator\nauthorizer: CassandraAuthorizer\nsuperuser_setup_delay: 0s\n' >"$data/auth.yaml"
bin/sibyl server --config "$data/auth.yaml" --data-dir "$data/auth" --native-transport-port "$aport" \
	--admin-port "$(free_port)" >"$alog" 2>&1 &
apid=$!
await "$aport" "$apid" "$alog" "the server with logins exited"
"$PY" -W ignore test/compat/auth.py 127.0.0.1 "$aport" || rc=1
gocql_src="$(go env GOMODCACHE)/github.com/gocql/gocql@$(go list -m -f '{{.Version}}' github.com/gocql/gocql)"
cp -r "$gocql_src" "$data/gocql" && chmod -R u+w "$data/gocql"
if ! (cd "$data/gocql" && go test -tags "integration gocql_debug" -run '^TestAuthentication$' -count=1 -v . \
	-args -runauth -proto 4 -cluster "127.0.0.1:$aport" -gocql.timeout 10s) >"$data/gocql-auth.log" 2>&1 ||
	! grep -q '^--- PASS: TestAuthentication' "$data/gocql-auth.log"; then
	echo "compat: gocql's TestAuthentication (-runauth) failed:"
	cat "$data/gocql-auth.log"
	rc=1
fi
kill -TERM "$apid"
wait "$apid" || rc=1
if [ "$rc" -ne 0 ]; then
	echo "compat: auth server log:"
	cat "$alog"
fi
# A node whose native port takes TLS alone and requires client
# certificates, with gocql's testdata/pki certificates: the Python driver's
# ssl_context (tls.py), and gocql's integration tests with -runssl (less
# the ones that fail without TLS too: write failures, custom payloads and
# UDFs are not built yet).
pki="$data/gocql/testdata/pki"
tport=$(free_port)
tlog="$data/tls.log"
printf 'client_encryption_options:\n  enabled: true\n  keystore: %s\n  keystore_key: %s\n  require_client_auth: true\n  truststore: %s\n' \
	"$pki/cassandra.crt" "$pki/cassandra.key" "$pki/ca.crt" >"$data/tls.yaml"
bin/sibyl server --config "$data/tls.yaml" --data-dir "$data/tls" --native-transport-port "$tport" \
	--admin-port "$(free_port)" >"$tlog" 2>&1 &
tpid=$!
await "$tport" "$tpid" "$tlog" "the server with TLS exited"
"$PY" -W ignore test/compat/tls.py 127.0.0.1 "$tport" "$pki" || rc=1
if ! (cd "$data/gocql" && go test -tags "integration gocql_debug" -count=1 -v -timeout 5m \
	-skip '^(TestWriteFailure|TestCustomPayloadMessages|TestCustomPayloadValues|TestUDF)$' . \
	-args -runssl -proto 4 -rf 1 -clusterSize 1 -cluster "127.0.0.1:$tport" -gocql.cversion 4.1.6 -gocql.timeout 10s) \
	>"$data/gocql-ssl.log" 2>&1; then
	echo "compat: gocql's integration tests with -runssl failed:"
	grep -E '^(--- FAIL|FAIL|ok|panic)' "$data/gocql-ssl.log" || tail -50 "$data/gocql-ssl.log"
	rc=1
fi
kill -TERM "$tpid"
wait "$tpid" || rc=1
if [ "$rc" -ne 0 ]; then
	echo "compat: TLS server log:"
	cat "$tlog"
fi
if [ "$rc" -ne 0 ]; then
	echo "compat: server log:"
	cat "$log"
fi
exit "$rc"
