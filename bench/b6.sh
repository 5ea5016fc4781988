#!/usr/bin/env bash
# make bench-b6: B6 of the benchmarks page. A local three-node cluster
# (RF 3) is loaded with B6_ROWS rows of 1 KB, its capacity measured with
# `sibyl stress mixed` (QUORUM, 1:1) for B6_CAPACITY seconds, and then,
# under a constant QUORUM load of half that (stress mixed --verify), it
# grows to four and five nodes and shrinks back to three (add, add,
# decommission, decommission), has a node replaced (stopped, then `sibyl
# cluster replace`) and is repaired (nodetool repair), one operation at a
# time with B6_PAUSE seconds between. Before the capacity is measured,
# the compactions the load left are waited out (at most B6_SETTLE s).
# It prints, per operation, its time, the failed requests and the mean
# of the per-second p99 during it over that before the first, and the
# bytes streamed (from the nodes' logs) with their rate; then stress's
# read-back of every acknowledged write.
# B6_STREAM_MIB, when set, is the stream_throughput_outbound (and its
# entire-SSTable twin) in MiB/s every node is given (nodetool
# setstreamthroughput) before each operation, to weigh operation time
# against p99; B6_RATE, when set, is the load's rate in place of half the
# capacity measured, so that runs compare at one load.
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${B6_ROWS:-1000000}
capacity_secs=${B6_CAPACITY:-15}
pause=${B6_PAUSE:-10}
out=${B6_OUT:-bench/b6-results}
mkdir -p "$out"
. bench/lib.sh
port=$(free_port)
admin=$(free_port)
data=$(mktemp -d)
dir="$data/cluster"
# A joining node streams before it serves CQL: at a low stream throughput
# that outlasts the cluster tool's default wait.
cluster() { bin/sibyl cluster "$@" --dir "$dir" --wait 30m; }
cleanup() {
	[ -z "${stress_pid:-}" ] || kill "$stress_pid" 2>/dev/null || true
	cluster down >/dev/null 2>&1 || true
	rm -rf "$data"
}
trap cleanup EXIT
cluster up --nodes 3 --native-transport-port "$port" --admin-port "$admin" --gossip-port "$(free_port)" --storage-port "$(free_port)" >"$out/cluster.log"
bin/sibyl stress write --nodes 127.0.0.1,127.0.0.2,127.0.0.3 --port "$port" --keyspace b6 --replication-factor 3 --consistency QUORUM \
	--ops "$rows" --value-size 1024 --threads 64 >"$out/load.log"
# The compactions the load left run out before anything is measured: a
# p99 "before" taken while they run is not the cluster's.
settle=${B6_SETTLE:-900}
for ((waited = 0; waited < settle; waited += 5)); do
	pending=0
	for k in 1 2 3; do
		n=$(bin/sibyl nodetool -h "127.0.0.$k" -p "$admin" compactionstats | sed -n 's/^pending tasks: //p')
		pending=$((pending + ${n:-1}))
	done
	[ "$pending" -eq 0 ] && break
	sleep 5
done
echo "compactions settled after ${waited} s"
bin/sibyl stress mixed --nodes 127.0.0.1,127.0.0.2,127.0.0.3 --port "$port" --keyspace b6 --consistency QUORUM --overwrite --keys "$rows" \
	--value-size 1024 --duration "${capacity_secs}s" --json "$out/capacity.json" >"$out/capacity.log"
rate=$(python3 -c "import json; c = json.load(open('$out/capacity.json')); print(int(c['total_ops'] / c['seconds'] / 2))")
echo "capacity measured: $((rate * 2)) ops/s"
rate=${B6_RATE:-$rate}
echo "load at $rate ops/s"
# The load runs until the operations are done (SIGINT ends it early, its
# read-back still done); its duration is only a bound.
duration=${B6_DURATION:-3600}
bin/sibyl stress mixed --nodes 127.0.0.1,127.0.0.2 --port "$port" --keyspace b6v --replication-factor 3 --consistency QUORUM \
	--value-size 1024 --rate "$rate" --duration "${duration}s" --verify --json "$out/load-during.json" >"$out/load-during.log" 2>&1 &
stress_pid=$!
start=$(date +%s.%N)
: >"$out/ops.tsv"
op() {
	local name=$1
	shift
	local t0 t1
	if [ -n "${B6_STREAM_MIB:-}" ]; then
		for k in 1 2 3 4 5; do
			bin/sibyl nodetool -h "127.0.0.$k" -p "$admin" setstreamthroughput -m "$B6_STREAM_MIB" >/dev/null 2>&1 || true
			bin/sibyl nodetool -h "127.0.0.$k" -p "$admin" setstreamthroughput -e "$B6_STREAM_MIB" >/dev/null 2>&1 || true
		done
	fi
	t0=$(date +%s.%N)
	"$@" >>"$out/cluster.log" 2>&1
	t1=$(date +%s.%N)
	printf '%s\t%s\t%s\n' "$name" "$(echo "$t0 - $start" | bc)" "$(echo "$t1 - $start" | bc)" >>"$out/ops.tsv"
	echo "$name: $(echo "$t1 - $t0" | bc) s"
	sleep "$pause"
}
sleep 20 # the p99 before
op "bootstrap node4" cluster add
op "bootstrap node5" cluster add
op "decommission node5" cluster decommission node5
op "decommission node4" cluster decommission node4
cluster stop node3 >>"$out/cluster.log"
op "replace node3" cluster replace node3
op "repair" bin/sibyl nodetool -h 127.0.0.1 -p "$admin" repair b6
end=$(echo "$(date +%s.%N) - $start" | bc)
echo "operations done after $end s; the load ends and reads back"
kill -INT "$stress_pid"
wait "$stress_pid"
stress_pid=
for f in "$dir"/node*/logs/system.log; do cp "$f" "$out/$(basename "$(dirname "$(dirname "$f")")").log"; done
python3 - "$out" "$start" <<'PY'
import json, re, sys, datetime, os, glob
out, start = sys.argv[1], float(sys.argv[2])
run = json.load(open(f"{out}/load-during.json"))
secs = run["per_second"]
ops = [l.rstrip("\n").split("\t") for l in open(f"{out}/ops.tsv")]
def window(a, b):
    return [s for s in secs if a <= s["second"] <= b + 1]
base = window(0, float(ops[0][1]))
base_p99 = sum(s["p99_ms"] for s in base) / len(base)
# Streamed bytes from the nodes' logs, by the time of each line.
streamed = []
day = datetime.datetime.fromtimestamp(start).date()
for f in glob.glob(f"{out}/node*.log"):
    for line in open(f, errors="replace"):
        line = re.sub(r"\x1b\[[0-9;]*m", "", line)
        m = re.match(r"(\d\d):(\d\d):(\d\d\.\d+) .*streamed a keyspace's ranges bytes=(\d+)", line)
        if m:
            t = datetime.datetime.combine(day, datetime.time(int(m[1]), int(m[2]))).timestamp() + float(m[3]) - start
            streamed.append((t, int(m[4])))
print(f"p99 before the operations: {base_p99:.1f} ms (mean of {len(base)} seconds)")
print("| operation | time (s) | failed requests | p99 during / before | streamed | rate |")
print("|---|---|---|---|---|---|")
for name, a, b in ops:
    a, b = float(a), float(b)
    w = window(a, b)
    errors = sum(s["errors"] for s in w)
    p99 = sum(s["p99_ms"] for s in w) / max(len(w), 1)
    moved = sum(n for t, n in streamed if a <= t <= b + 1)
    rate = moved / (b - a) / 2**20 if b > a else 0
    print(f"| {name} | {b - a:.1f} | {errors} | {p99 / base_p99:.2f}x ({p99:.1f} ms) | {moved / 2**20:.0f} MiB | {rate:.1f} MiB/s |")
v = run.get("verify") or {}
print(f"load: {run['total_ops']} operations in {run['seconds']:.0f} s, errors {sum(s['errors'] for s in secs)}; verify {json.dumps(v)}")
PY
