#!/usr/bin/env bash
# make bench-secure: what logins, permissions and TLS cost, side by side
# in one run: a local three-node cluster (sibyl cluster up, RF 3) plain,
# then one made with --pwd-auth --ssl (PasswordAuthenticator,
# CassandraAuthorizer, TLS on the native, storage and admin ports, gossip
# sealed), each loaded with `sibyl stress write` at QUORUM for
# BENCH_DURATION with BENCH_THREADS token-aware client threads (the
# secure one logged in as cassandra over TLS), then a table of ops/s and
# latency percentiles and the ratios. BENCH_ROUNDS repeats the pair.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${BENCH_DURATION:-30s}
threads=${BENCH_THREADS:-32}
rounds=${BENCH_ROUNDS:-1}
out=${BENCH_OUT:-bench/secure-results}
mkdir -p "$out"
. bench/lib.sh
data=$(mktemp -d)
cleanup() {
	for d in "$data"/*/; do bin/sibyl cluster down --dir "$d" >/dev/null 2>&1 || true; done
	rm -rf "$data"
}
trap cleanup EXIT
run() { # run NAME ROUND [cluster up flags...]
	local name=$1 round=$2
	shift 2
	local dir="$data/$name-$round" port
	port=$(free_port)
	bin/sibyl cluster up --nodes 3 --dir "$dir" --native-transport-port "$port" --admin-port "$(free_port)" \
		--gossip-port "$(free_port)" --storage-port "$(free_port)" "$@" >"$out/$name-$round-cluster.log" 2>&1
	local client=()
	if [ $# -gt 0 ]; then client=(-u cassandra -p cassandra --ssl --ssl-ca "$dir/pki/cluster-ca.crt"); fi
	echo "== round $round: $name"
	bin/sibyl stress write --nodes 127.0.0.1,127.0.0.2,127.0.0.3 --port "$port" --replication-factor 3 --consistency QUORUM \
		--token-aware --threads "$threads" --duration "$duration" --seed 1 "${client[@]}" --json "$out/$name-$round.json" >"$out/$name-$round.log"
	grep -v '%$' "$out/$name-$round.log" | tail -2
	bin/sibyl cluster down --dir "$dir" >/dev/null
}
for round in $(seq "$rounds"); do
	run plain "$round"
	run secure "$round" --pwd-auth --ssl
done
python3 - "$out" "$rounds" <<'PY'
import json, sys, os
out, rounds = sys.argv[1], int(sys.argv[2])
print("| round | cluster | ops/s | mean | p50 | p99 | p99.9 | errors |")
print("|---|---|---|---|---|---|---|---|")
for r in range(1, rounds + 1):
    p = json.load(open(os.path.join(out, f"plain-{r}.json")))["operations"]["insert"]
    s = json.load(open(os.path.join(out, f"secure-{r}.json")))["operations"]["insert"]
    for name, o in (("plain", p), ("--pwd-auth --ssl", s)):
        print(f"| {r} | {name} | {o['ops_per_s']:.0f} | {o['mean_ms']:.2f} | {o['p50_ms']:.2f} | {o['p99_ms']:.2f} | {o['p99_9_ms']:.2f} | {sum((o.get('errors') or {}).values())} |")
    print(f"| {r} | secure / plain | {s['ops_per_s'] / p['ops_per_s']:.2f}x | {s['mean_ms'] / p['mean_ms']:.2f}x | {s['p50_ms'] / p['p50_ms']:.2f}x | {s['p99_ms'] / p['p99_ms']:.2f}x | {s['p99_9_ms'] / p['p99_9_ms']:.2f}x | |")
PY
