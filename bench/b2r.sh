#!/usr/bin/env bash
# make bench-b2r: B2r of the benchmarks page. One fresh node driven by the
# shared raw pipelined client (cql-ceiling: protocol v4, 2 connections, 32
# requests in flight on each, on the same two cores as the server): OPTIONS
# (framing and dispatch only, the protocol ceiling), a prepared INSERT of
# (bigint key, 128-byte blob) and a prepared SELECT by key, over a key space
# of 1,000,000, B2R_ROUNDS rounds (default 3) of B2R_SECONDS each (default
# 10). It prints every phase and the medians of the per-round ratios
# INSERT/OPTIONS and SELECT/OPTIONS. B2R_PROFILE=DIR also saves a CPU profile
# of the server over each phase of the last round (from the admin API's
# /debug/pprof). SIBYL_BIN runs another build (default bin/sibyl), for
# builds compared side by side.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${B2R_SECONDS:-10}
rounds=${B2R_ROUNDS:-3}
ceiling_src=${CQL_CEILING:-../shared/tools/cql-ceiling}
sibyl=${SIBYL_BIN:-bin/sibyl}
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
work=$(mktemp -d)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
(cd "$ceiling_src" && CGO_ENABLED=0 go build -o "$work/cql-ceiling" .)
port=$(free_port)
admin=$(free_port)
"$sibyl" server --data-dir "$work/data" --native-transport-port "$port" --admin-port "$admin" \
	--gossip-port "$(free_port)" --storage-port "$(free_port)" >"$work/server.log" 2>&1 &
pid=$!
for _ in $(seq 100); do
	if python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.2)' "$port" 2>/dev/null; then break; fi
	sleep 0.1
done
echo "B2r: nproc $(nproc), $(go version | cut -d' ' -f3), binary $sibyl (tree at $(git rev-parse --short HEAD)), ${rounds} rounds of ${seconds}s per phase"
if [ -n "${B2R_PROFILE:-}" ]; then
	mkdir -p "$B2R_PROFILE"
	# The earlier rounds as asked, then one more with a profile of each phase.
	[ "$rounds" -gt 1 ] && "$work/cql-ceiling" -addr "127.0.0.1:$port" -d "${seconds}s" -rounds $((rounds - 1)) | tee "$work/out"
	"$work/cql-ceiling" -addr "127.0.0.1:$port" -d "${seconds}s" -rounds 1 | sed "s/^round 1 /round $rounds /" | tee -a "$work/out" &
	client=$!
	for phase in options insert select; do
		sleep 1
		curl -s "http://127.0.0.1:$admin/debug/pprof/profile?seconds=$((seconds - 2))" -o "$B2R_PROFILE/$phase.pprof"
		sleep 1
	done
	wait "$client"
else
	"$work/cql-ceiling" -addr "127.0.0.1:$port" -d "${seconds}s" -rounds "$rounds" | tee "$work/out"
fi
python3 - "$work/out" <<'EOF'
import re, statistics, sys
rounds = {}
for line in open(sys.argv[1]):
    m = re.match(r'round (\d+) (\w+)\s+(\d+) req/s\s+errors (\d+)', line)
    if m:
        rounds.setdefault(int(m[1]), {})[m[2]] = (int(m[3]), int(m[4]))
ins = [r['insert'][0] / r['options'][0] for r in rounds.values()]
sel = [r['select'][0] / r['options'][0] for r in rounds.values()]
errors = sum(e for r in rounds.values() for _, e in r.values())
print("median ratios: insert/options %.2f (rounds %s), select/options %.2f (rounds %s); errors %d" % (
    statistics.median(ins), " / ".join("%.2f" % x for x in ins),
    statistics.median(sel), " / ".join("%.2f" % x for x in sel), errors))
EOF
echo "server RSS at the end: $(($(awk '/VmRSS/ {print $2}' /proc/$pid/status) / 1024)) MiB"
