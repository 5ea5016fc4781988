#!/usr/bin/env bash
# make bench-lwt and make bench-counter: a write path against plain writes
# on a local three-node cluster (RF 3), side by side in one run: `sibyl
# stress write --overwrite` (plain QUORUM rewrites of existing keys), then
# the workload named:
#   lwt      `sibyl stress lwt`: UPDATE ... IF EXISTS of the same keys,
#            SERIAL, commit at QUORUM
#   counter  `sibyl stress counter`: increments of counters of as many
#            keys, at QUORUM
# each for BENCH_DURATION, with BENCH_THREADS client threads and a
# token-aware client, then a table of ops/s and latency percentiles and
# the ratios. BENCH_KEYS (the key space, preloaded) and BENCH_ROUNDS
# repeat the pair.
set -euo pipefail
cd "$(dirname "$0")/.."
workload=${1:?usage: bench/vs-plain.sh lwt|counter}
case $workload in
lwt) op=cas label="LWT (IF EXISTS)" ;;
counter) op=increment label="counter increment" ;;
*) echo "bench/vs-plain.sh: $workload is not lwt or counter" >&2; exit 2 ;;
esac
duration=${BENCH_DURATION:-30s}
threads=${BENCH_THREADS:-32}
keys=${BENCH_KEYS:-100000}
rounds=${BENCH_ROUNDS:-1}
out=${BENCH_OUT:-bench/$workload-results}
mkdir -p "$out"
. bench/lib.sh
port=$(free_port)
data=$(mktemp -d)
bin/sibyl cluster up --nodes 3 --dir "$data/cluster" --native-transport-port "$port" --admin-port "$(free_port)" \
	--gossip-port "$(free_port)" --storage-port "$(free_port)" >"$data/cluster.log" 2>&1
cleanup() {
	bin/sibyl cluster down --dir "$data/cluster" >/dev/null 2>&1 || true
	rm -rf "$data"
}
trap cleanup EXIT
nodes=127.0.0.1,127.0.0.2,127.0.0.3
common=(--nodes "$nodes" --port "$port" --keyspace "${workload}_bench" --replication-factor 3 --consistency QUORUM --token-aware
	--keys "$keys" --threads "$threads" --duration "$duration" --seed 1)
echo "== preloading $keys keys"
bin/sibyl stress write "${common[@]}" --preload "$keys" --ops 1 >"$out/preload.log"
for round in $(seq "$rounds"); do
	echo "== round $round: plain QUORUM rewrites"
	bin/sibyl stress write --overwrite "${common[@]}" --json "$out/write-$round.json" >"$out/write-$round.log"
	grep -v '%$' "$out/write-$round.log" | tail -4
	echo "== round $round: $label"
	bin/sibyl stress "$workload" "${common[@]}" --json "$out/$workload-$round.json" >"$out/$workload-$round.log"
	grep -v '%$' "$out/$workload-$round.log" | tail -4
done
python3 - "$out" "$rounds" "$workload" "$op" "$label" <<'PY'
import json, sys, os
out, rounds, workload, op, label = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
print("| round | workload | ops/s | mean | p50 | p99 | p99.9 | errors |")
print("|---|---|---|---|---|---|---|---|")
for r in range(1, rounds + 1):
    w = json.load(open(os.path.join(out, f"write-{r}.json")))["operations"]["rewrite"]
    x = json.load(open(os.path.join(out, f"{workload}-{r}.json")))["operations"][op]
    for name, o in (("plain QUORUM write", w), (label, x)):
        print(f"| {r} | {name} | {o['ops_per_s']:.0f} | {o['mean_ms']:.2f} | {o['p50_ms']:.2f} | {o['p99_ms']:.2f} | {o['p99_9_ms']:.2f} | {sum((o.get('errors') or {}).values())} |")
    print(f"| {r} | {workload} / plain | {x['ops_per_s']/w['ops_per_s']:.2f}x | | {x['p50_ms']/w['p50_ms']:.2f}x | {x['p99_ms']/w['p99_ms']:.2f}x | {x['p99_9_ms']/w['p99_9_ms']:.2f}x | |")
PY
