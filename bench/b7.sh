#!/usr/bin/env bash
# The native-protocol half of B7 (make bench-b7 runs BenchmarkB7 first):
# one fresh node with its defaults, then B7_SECONDS (default 600) of new
# rows (16-byte keys, 128-byte values) from `sibyl stress write` with
# B7_THREADS requests in flight (default 64), unthrottled: the highest rate
# the node sustains. It prints each minute's rate, p99.9 and longest write,
# the node's pending compactions every ten seconds (from /metrics), and the
# goals: each minute's p99.9 within 3x of the first, no write over 100 ms,
# pending compactions bounded; then what the writes waited on besides
# their work (the node's scheduler latencies and GC pauses). SIBYL_BIN runs
# another build; the stress report and the samples stay in B7_OUT
# (default bench/b7-results).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
out=${B7_OUT:-bench/b7-results}
mkdir -p "$out"
seconds=${B7_SECONDS:-600}
threads=${B7_THREADS:-64}
sibyl=${SIBYL_BIN:-bin/sibyl}
work=$(mktemp -d)
pid=
cleanup() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid" 2>/dev/null; wait "$pid" || true; fi
	rm -rf "$work"
}
trap cleanup EXIT
start_node "$sibyl" "$work"
echo "B7 writes: nproc $(nproc), $(go version | cut -d' ' -f3), binary $sibyl (tree at $(git rev-parse --short HEAD)), ${seconds}s, $threads in flight"
(
	while kill -0 "$pid" 2>/dev/null; do
		pending=$(curl -s "http://127.0.0.1:$admin/metrics" | awk '/^sibyl_compaction_pending_tasks / {print $2}')
		sstables=$(find "$work/data" -name '*-Data.db' 2>/dev/null | wc -l)
		echo "$(date +%s) ${pending:-?} $sstables $(du -sm "$work/data" 2>/dev/null | cut -f1)"
		sleep 10
	done
) >"$work/compactions" 2>/dev/null &
sampler=$!
scrape_waits "$admin" 127.0.0.1 >"$work/before"
"$sibyl" stress write --port "$port" --duration "${seconds}s" --threads "$threads" --connections 2 \
	--key-size 16 --value-size 128 --json "$out/stress.json" >"$out/stress.log"
grep -vE '^ +[0-9]+[.][0-9] ' "$out/stress.log" || true # the per-second lines stay in the log
scrape_waits "$admin" 127.0.0.1 >"$work/after"
kill "$sampler" 2>/dev/null || true
cp "$work/compactions" "$out/compactions"
echo "what the node's goroutines waited on over the run:"
print_waits "$work/before" "$work/after"
python3 - "$out/stress.json" "$out/compactions" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
minutes = s.get("per_minute") or []
samples = [l.split() for l in open(sys.argv[2]) if len(l.split()) == 4]
if samples:
    t0 = int(samples[0][0])
    print("pending compactions (every 10 s): " + " ".join(p for _, p, _, _ in samples))
    print("live sstables (every 10 s):       " + " ".join(n for _, _, n, _ in samples))
    print("data MiB at the end: %s" % samples[-1][3])
write = next(iter(s["operations"].values()))
errors = sum(write["errors"].values())
if minutes:
    first = minutes[0]["p99_9_ms"]
    worst = max(m["p99_9_ms"] for m in minutes)
    pending = [int(p) for _, p, _, _ in samples if p.isdigit()]
    print("goals: worst minute p99.9 %.2f ms = %.2fx the first (goal <= 3x); longest write %.1f ms (goal <= 100 ms); "
          "pending compactions max %s, last %s; errors %d" % (
              worst, worst / first, write["max_ms"], max(pending, default="?"), pending[-1] if pending else "?", errors))
PY
echo "server RSS at the end: $(($(awk '/VmRSS/ {print $2}' /proc/$pid/status) / 1024)) MiB"
