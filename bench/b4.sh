#!/usr/bin/env bash
# make bench-b4: B4 of the benchmarks page, cluster transparency and
# scale-out. One node against a three-node cluster (RF 1) on 127.0.0.x,
# every node capped at the same CPU quota through a cgroup (cpu-quota, which
# needs root and cgroup v1), the client outside the quotas. Each of four
# workloads (writes only, reads only, 1:1 and 1:10 writes to reads; 128-byte
# values, a key space of 500,000) runs against the single node, then against
# the cluster with a regular client (it talks to node1, which forwards) and
# with a token-aware one. It prints throughput and the ratios
# cluster/single. B4_QUOTA (cores per node, default 0.4), B4_SECONDS (per
# run, default 20), B4_KEYS and B4_THREADS scale it.
set -euo pipefail
cd "$(dirname "$0")/.."
quota=${B4_QUOTA:-0.4}
seconds=${B4_SECONDS:-20}
keys=${B4_KEYS:-500000}
threads=${B4_THREADS:-64}
out=${B4_OUT:-bench/b4-results}
cpuquota=${CPU_QUOTA:-../shared/tools/cpu-quota}
mkdir -p "$out"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
work=$(mktemp -d)
dirs=()
cleanup() {
	for d in "${dirs[@]}"; do bin/sibyl cluster down --dir "$d" >/dev/null 2>&1 || true; done
	for n in 1 2 3; do "$cpuquota" rm "b4-node$n" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT

# run CONFIG NODES NATIVE_PORT NAME STRESS_ARGS...: one workload, its JSON in $out.
run() {
	local config=$1 port=$2 name=$3
	shift 3
	bin/sibyl stress "$@" --port "$port" --threads "$threads" --value-size 128 --keys "$keys" \
		--duration "${seconds}s" --seed 1 --json "$out/$config-$name.json" >"$out/$config-$name.log"
	python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print("%-22s %-12s %9.0f ops/s" % (sys.argv[2], sys.argv[3], s["total_ops"]/s["seconds"]))' \
		"$out/$config-$name.json" "$config" "$name"
}

# cluster NAME NODES: starts a capped cluster and runs every workload.
cluster() {
	local config=$1 nodes=$2 port
	port=$(free_port)
	local dir="$work/$config"
	dirs+=("$dir")
	bin/sibyl cluster up --nodes "$nodes" --dir "$dir" --native-transport-port "$port" --admin-port "$(free_port)" \
		--gossip-port "$(free_port)" --storage-port "$(free_port)" >/dev/null
	for n in $(seq "$nodes"); do
		"$cpuquota" add "b4-node$n" "$quota" "$(cat "$dir/node$n/sibyl.pid")"
	done
	local clients=("regular")
	[ "$nodes" -gt 1 ] && clients+=("token-aware")
	for client in "${clients[@]}"; do
		local args=(--nodes 127.0.0.1 --keyspace "b4_${client//-/_}" --replication-factor 1)
		[ "$client" = token-aware ] && args+=(--token-aware)
		local tag="$config/$client"
		run "${tag//\//-}" "$port" reads read --preload "$keys" "${args[@]}"
		run "${tag//\//-}" "$port" writes write "${args[@]}"
		run "${tag//\//-}" "$port" mixed-1-1 mixed --ratio 1:1 "${args[@]}"
		run "${tag//\//-}" "$port" mixed-1-10 mixed --ratio 1:10 "${args[@]}"
	done
	bin/sibyl cluster down --dir "$dir" >/dev/null
	# A stopped node's group may stay busy a moment (the process not yet
	# reaped); a later rm, or the next add, takes it over.
	for n in $(seq "$nodes"); do "$cpuquota" rm "b4-node$n" 2>/dev/null || true; done
}

echo "B4: $quota cores per node, ${seconds}s per run, $threads threads, 128-byte values, $keys keys"
cluster single 1
cluster three 3
python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
rate = lambda c, w: (lambda s: s["total_ops"] / s["seconds"])(json.load(open(os.path.join(out, f"{c}-{w}.json"))))
print("| workload | single | three, regular | ratio | three, token-aware | ratio |")
print("|---|---|---|---|---|---|")
for w in ("writes", "reads", "mixed-1-1", "mixed-1-10"):
    s, r, t = rate("single-regular", w), rate("three-regular", w), rate("three-token-aware", w)
    print(f"| {w} | {s:.0f} | {r:.0f} | {r/s:.2f} | {t:.0f} | {t/s:.2f} |")
PY
