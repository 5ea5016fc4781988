#!/usr/bin/env bash
# make bench-b3: B3 of the benchmarks page, on one node (RF 1) or, with
# B3_NODES=3, on a local three-node cluster (RF 3, a token-aware client).
# It starts bin/sibyl (or `sibyl cluster up`) on free loopback ports with
# fresh data directories, runs `sibyl stress dynamo` at QUORUM for each value
# size and mix (each in its own keyspace, dropped afterwards), and prints a
# table of reads and writes from the JSON reports (of every size and mix
# in the output directory). B3_OPS, B3_PRELOAD, B3_WARMUP and B3_THREADS
# scale it down; B3_SIZES and B3_MIXES pick some of the runs. SIBYL_BIN
# runs another build's nodes (the client stays bin/sibyl), for builds
# compared side by side. After each run it prints, per node, what the
# run's requests waited on besides their own work: how long runnable
# goroutines waited for a CPU (Go's scheduler latencies) and the GC's
# stop-the-world pauses, from the nodes' /metrics.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
ops=${B3_OPS:-100000}
preload=${B3_PRELOAD:-200000}
warmup=${B3_WARMUP:-20000}
threads=${B3_THREADS:-40}
nodes=${B3_NODES:-1}
out=${B3_OUT:-bench/b3-results}
server=${SIBYL_BIN:-bin/sibyl}
mkdir -p "$out"
port=$(free_port)
admin_port=$(free_port)
data=$(mktemp -d)
pid=
stress_nodes=127.0.0.1
client=()
if [ "$nodes" -eq 1 ]; then
	"$server" server --data-dir "$data/node" --native-transport-port "$port" --admin-port "$admin_port" >"$data/server.log" 2>&1 &
	pid=$!
else
	"$server" cluster up --nodes "$nodes" --dir "$data/cluster" --native-transport-port "$port" --admin-port "$admin_port" \
		--gossip-port "$(free_port)" --storage-port "$(free_port)" >"$data/server.log" 2>&1
	stress_nodes=$(seq -s, -f '127.0.0.%g' 1 "$nodes")
	client=(--token-aware)
fi
cleanup() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid" 2>/dev/null; wait "$pid" || true; fi
	[ "$nodes" -eq 1 ] || "$server" cluster down --dir "$data/cluster" >/dev/null 2>&1 || true
	rm -rf "$data"
}
trap cleanup EXIT
for _ in $(seq 100); do
	if bin/sibyl cqlsh 127.0.0.1 "$port" -e 'SELECT release_version FROM system.local' >/dev/null 2>&1; then break; fi
	if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then echo "b3: the server exited:"; cat "$data/server.log"; exit 1; fi
	sleep 0.2
done
for size in ${B3_SIZES:-1500 15000}; do
	for mix in ${B3_MIXES:-1 2 3 4}; do
		ks="b3_${size}_${mix}"
		echo "== value size $size, mix $mix"
		scrape_waits "$admin_port" $(seq -f '127.0.0.%g' 1 "$nodes") >"$data/before"
		bin/sibyl stress dynamo --nodes "$stress_nodes" --port "$port" --keyspace "$ks" --mix "$mix" --value-size "$size" \
			--preload "$preload" --warmup "$warmup" --ops "$ops" --threads "$threads" "${client[@]}" \
			--consistency QUORUM --replication-factor "$nodes" --seed 1 --json "$out/$ks.json" >"$out/$ks.log"
		grep -v '%$' "$out/$ks.log"
		scrape_waits "$admin_port" $(seq -f '127.0.0.%g' 1 "$nodes") >"$data/after"
		print_waits "$data/before" "$data/after"
		bin/sibyl cqlsh 127.0.0.1 "$port" -e "DROP KEYSPACE $ks"
	done
done
python3 - "$out" <<'PY'
import json, sys, os
print("| value | mix | op | ops/s | mean | p50 | p99 | p99.9 | p99.99 | p99.9/p50 | p99.99/p50 | errors |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for size in (1500, 15000):
    for mix in (1, 2, 3, 4):
        path = os.path.join(sys.argv[1], f"b3_{size}_{mix}.json")
        if not os.path.exists(path):
            continue  # not among B3_SIZES and B3_MIXES
        s = json.load(open(path))
        ops = s["operations"]
        groups = {"write": [o for k, o in ops.items() if k in ("insert", "rewrite")], "read": [ops[k] for k in ("read",) if k in ops]}
        for name, group in groups.items():
            for o in group:
                op = [k for k, v in ops.items() if v is o][0]
                print(f"| {size} B | {mix} | {op} | {o['ops_per_s']:.0f} | {o['mean_ms']:.2f} | {o['p50_ms']:.2f} | {o['p99_ms']:.2f} | {o['p99_9_ms']:.2f} | {o['p99_99_ms']:.2f} | {o['p99_9_ms']/o['p50_ms']:.1f} | {o['p99_99_ms']/o['p50_ms']:.1f} | {sum((o.get('errors') or {}).values())} |")
PY
