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
. bench/lib.sh
seconds=${B2R_SECONDS:-10}
rounds=${B2R_ROUNDS:-3}
ceiling_src=${CQL_CEILING:-../shared/tools/cql-ceiling}
sibyl=${SIBYL_BIN:-bin/sibyl}
work=$(mktemp -d)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
(cd "$ceiling_src" && CGO_ENABLED=0 go build -o "$work/cql-ceiling" .)
start_node "$sibyl" "$work"
echo "B2r: nproc $(nproc), $(go version | cut -d' ' -f3), binary $sibyl (tree at $(git rev-parse --short HEAD)), ${rounds} rounds of ${seconds}s per phase"
# The server's CPU time, sampled twice a second (clock ticks of user and
# system time, against the wall clock), for its cost per request in each
# phase: throughput on these shared machines moves with what the
# neighbours do, the CPU a request takes much less.
(
	while kill -0 "$pid" 2>/dev/null; do
		echo "$(date +%s.%N) $(awk '{print $14 + $15}' "/proc/$pid/stat")"
		sleep 0.5
	done
) >"$work/cpu" 2>/dev/null &
sampler=$!
started=$(date +%s.%N)
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
kill "$sampler" 2>/dev/null || true
python3 - "$work/out" "$work/cpu" "$started" "$seconds" "$(getconf CLK_TCK)" <<'EOF'
import re, statistics, sys
out, cpu, started, seconds, tick = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
rounds = {}
for line in open(out):
    m = re.match(r'round (\d+) (\w+)\s+(\d+) req/s\s+errors (\d+)', line)
    if m:
        rounds.setdefault(int(m[1]), {})[m[2]] = (int(m[3]), int(m[4]))
samples = [tuple(map(float, l.split())) for l in open(cpu) if len(l.split()) == 2]
def cores(lo, hi):
    # The server's cores in use between two times after the start, from
    # the samples inside them.
    inside = [(t, c) for t, c in samples if started + lo <= t <= started + hi]
    if len(inside) < 2:
        return None
    (t0, c0), (t1, c1) = inside[0], inside[-1]
    return (c1 - c0) / tick / (t1 - t0)
order = ['options', 'insert', 'select']
costs = {p: [] for p in order}
for i, (n, r) in enumerate(sorted(rounds.items())):
    for j, p in enumerate(order):
        start = (i * 3 + j) * seconds
        c = cores(start + 1, start + seconds - 1)
        if c is not None and r[p][0] > 0:
            costs[p].append(c / r[p][0] * 1e6)
ins = [r['insert'][0] / r['options'][0] for r in rounds.values()]
sel = [r['select'][0] / r['options'][0] for r in rounds.values()]
errors = sum(e for r in rounds.values() for _, e in r.values())
print("median ratios: insert/options %.2f (rounds %s), select/options %.2f (rounds %s); errors %d" % (
    statistics.median(ins), " / ".join("%.2f" % x for x in ins),
    statistics.median(sel), " / ".join("%.2f" % x for x in sel), errors))
if all(costs.values()):
    print("server CPU per request, median of rounds: " + ", ".join("%s %.1f us (rounds %s)" % (
        p, statistics.median(costs[p]), " / ".join("%.1f" % x for x in costs[p])) for p in order))
EOF
echo "server RSS at the end: $(($(awk '/VmRSS/ {print $2}' /proc/$pid/status) / 1024)) MiB"
