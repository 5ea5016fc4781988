#!/usr/bin/env bash
# make bench-b4: B4 of the benchmarks page, cluster transparency and
# scale-out. One node against a three-node cluster (RF 1) on 127.0.0.x,
# every node capped at the same CPU quota through a cgroup (cpu-quota, which
# needs root and cgroup v1), the client outside the quotas. Each of four
# workloads (writes only, reads only, 1:1 and 1:10 writes to reads; 128-byte
# values, writes and reads over a key space of 500,000) runs against the
# single node, then against the cluster with a regular client and with a
# token-aware one. The client is B4_CLIENTS stress processes (default 3): a
# regular process connects to one node (process i to node i; all to the one
# node of the single-node run), which coordinates and forwards; a token-aware
# process sends each request to the key's replica. It prints throughput and
# the ratios cluster/single. B4_QUOTA (cores per node, default 0.25),
# B4_SECONDS (per run, default 20), B4_KEYS and B4_THREADS (in all, default
# 3000) scale it. B4_RUNS (default 1) repeats the whole comparison on fresh
# nodes and prints each run's ratios and their medians: one node's own
# throughput moves by about a tenth from run to run, and the ratios with it.
# Why 0.25 cores and 3,000 requests in flight: the client needs about 0.7
# cores to drive the cluster, which 0.4 per node (1.2 of the
# machine's 2) does not leave it; and a node that has spent its quota stalls
# for most of the 100 ms period, so with few requests in flight every client
# thread soon waits on the stalled node while the other two idle.
set -euo pipefail
cd "$(dirname "$0")/.."
quota=${B4_QUOTA:-0.25}
seconds=${B4_SECONDS:-20}
keys=${B4_KEYS:-500000}
threads=${B4_THREADS:-3000}
clients=${B4_CLIENTS:-3}
runs=${B4_RUNS:-1}
results=${B4_OUT:-bench/b4-results}
cpuquota=${CPU_QUOTA:-../shared/tools/cpu-quota}
. bench/lib.sh
work=$(mktemp -d)
dirs=()
cleanup() {
	for d in "${dirs[@]}"; do bin/sibyl cluster down --dir "$d" >/dev/null 2>&1 || true; done
	for n in 1 2 3; do "$cpuquota" rm "b4-node$n" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT

# run TAG NAME NODES ARGS...: one workload through $clients stress processes at
# once, each with its share of the threads and its own seed; a regular
# process talks to one node (process i to node i of the cluster, all to
# node1 of the single node), a token-aware one to every node. Their JSON
# goes to $out; the line printed is their summed throughput.
run() {
	local tag=$1 name=$2 nodes=$3
	shift 3
	local pids=() files=()
	for i in $(seq "$clients"); do
		local node=127.0.0.$(((i - 1) % nodes + 1)) file="$out/$tag-$name-$i.json"
		files+=("$file")
		bin/sibyl stress "$@" --nodes "$node" --port "$port" --threads $((threads / clients)) --value-size 128 --keys "$keys" \
			--duration "${seconds}s" --seed "$i" --json "$file" >"$out/$tag-$name-$i.log" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p"; done
	python3 -c 'import json,sys; print("%-22s %-12s %9.0f ops/s" % (sys.argv[1], sys.argv[2], sum(s["total_ops"]/s["seconds"] for s in map(lambda f: json.load(open(f)), sys.argv[3:]))))' \
		"$tag" "$name" "${files[@]}"
}

# cluster NAME NODES CLIENT: starts a fresh capped cluster, preloads the key
# space and runs every workload with one kind of client. Each client kind
# gets a cluster of its own, so none inherits another's compaction debt.
cluster() {
	local config=$1 nodes=$2 client=$3
	port=$(free_port)
	local dir="$work/$(basename "$out")-$config-$client"
	dirs+=("$dir")
	bin/sibyl cluster up --nodes "$nodes" --dir "$dir" --native-transport-port "$port" --admin-port "$(free_port)" \
		--gossip-port "$(free_port)" --storage-port "$(free_port)" >/dev/null
	for n in $(seq "$nodes"); do
		"$cpuquota" add "b4-node$n" "$quota" "$(cat "$dir/node$n/sibyl.pid")"
	done
	local args=(--keyspace b4 --replication-factor 1 --overwrite)
	[ "$client" = token-aware ] && args+=(--token-aware)
	local tag="$config-$client"
	# The key space, written once before the timed runs.
	bin/sibyl stress write --nodes 127.0.0.1 --port "$port" --threads 64 --value-size 128 --keys "$keys" \
		--preload "$keys" --ops 1 --seed 1 "${args[@]}" >"$out/$tag-preload.log"
	run "$tag" reads "$nodes" read "${args[@]}"
	run "$tag" writes "$nodes" write "${args[@]}"
	run "$tag" mixed-1-1 "$nodes" mixed --ratio 1:1 "${args[@]}"
	run "$tag" mixed-1-10 "$nodes" mixed --ratio 1:10 "${args[@]}"
	bin/sibyl cluster down --dir "$dir" >/dev/null
	# A stopped node's group may stay busy a moment (the process not yet
	# reaped); a later rm, or the next add, takes it over.
	for n in $(seq "$nodes"); do "$cpuquota" rm "b4-node$n" 2>/dev/null || true; done
}

echo "B4: $quota cores per node, ${seconds}s per run, $clients client processes with $threads threads in all, 128-byte values, $keys keys, $runs run(s)"
for r in $(seq "$runs"); do
	out="$results/run-$r"
	rm -rf "$out"
	mkdir -p "$out"
	cluster single 1 regular
	cluster three 3 regular
	cluster three 3 token-aware
done
python3 - "$results" "$runs" <<'PY'
import json, os, statistics, sys
results, runs = sys.argv[1], int(sys.argv[2])
def rate(out, c, w):
    files = [f for f in os.listdir(out) if f.startswith(f"{c}-{w}-") and f.endswith(".json")]
    return sum((lambda s: s["total_ops"] / s["seconds"])(json.load(open(os.path.join(out, f)))) for f in files)
workloads = ("writes", "reads", "mixed-1-1", "mixed-1-10")
ratios = {w: ([], []) for w in workloads}
for r in range(1, runs + 1):
    out = os.path.join(results, f"run-{r}")
    print(f"run {r}:")
    print("| workload | single | three, regular | ratio | three, token-aware | ratio |")
    print("|---|---|---|---|---|---|")
    for w in workloads:
        s, reg, tok = (rate(out, c, w) for c in ("single-regular", "three-regular", "three-token-aware"))
        ratios[w][0].append(reg / s)
        ratios[w][1].append(tok / s)
        print(f"| {w} | {s:.0f} | {reg:.0f} | {reg/s:.2f} | {tok:.0f} | {tok/s:.2f} |")
if runs > 1:
    print(f"medians over {runs} runs:")
    print("| workload | regular | median | token-aware | median |")
    print("|---|---|---|---|---|")
    for w in workloads:
        reg, tok = ratios[w]
        print(f"| {w} | {', '.join(f'{x:.2f}' for x in reg)} | {statistics.median(reg):.2f} | "
              f"{', '.join(f'{x:.2f}' for x in tok)} | {statistics.median(tok):.2f} |")
PY
