# Shell functions the benchmark scripts share (sourced, not run).

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# start_node BINARY DIR starts one node on 127.0.0.1 with its defaults, its
# data in DIR/data and its log in DIR/server.log, on free ports; it sets
# port (native), admin and pid, and returns once the native port answers.
start_node() {
	port=$(free_port)
	admin=$(free_port)
	"$1" server --data-dir "$2/data" --native-transport-port "$port" --admin-port "$admin" \
		--gossip-port "$(free_port)" --storage-port "$(free_port)" >"$2/server.log" 2>&1 &
	pid=$!
	for _ in $(seq 100); do
		if python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.2)' "$port" 2>/dev/null; then break; fi
		sleep 0.1
	done
}

# scrape_waits PORT ADDRESS... prints the Go scheduler latency and GC
# pause histograms of each node's /metrics (admin API on PORT), each line
# prefixed by the node's address.
scrape_waits() {
	local port=$1
	shift
	for addr in "$@"; do
		# A build without these histograms gives none.
		curl -s "http://$addr:$port/metrics" | { grep -E '^go_sched_(latencies|pauses_total_gc)_seconds_bucket' || true; } | sed "s/^/$addr /"
	done
}

# print_waits BEFORE AFTER prints, per node, what requests waited on
# besides their own work between two scrapes: how many times runnable goroutines
# waited for a CPU past each bucket bound, and the GC's stop-the-world pauses.
print_waits() {
	python3 - "$1" "$2" <<'PY'
import re, sys
def read(path):
    h = {}
    for line in open(path):
        m = re.match(r'(\S+) (\w+)_bucket\{le="([^"]+)"\} (\S+)', line)
        if m:
            h.setdefault((m[1], m[2]), []).append((float(m[3]), float(m[4])))
    return h
before, after = read(sys.argv[1]), read(sys.argv[2])
for (node, name), b in sorted(after.items()):
    prior = dict(before.get((node, name), []))
    d = [(le, n - prior.get(le, 0)) for le, n in b]
    total = d[-1][1]
    if total <= 0:
        continue
    # The runtime's buckets reach the exposition about ten times apart:
    # the counts past the upper ones are what can be told.
    over = ", ".join("%d over %.3g ms" % (total - n, le * 1e3) for le, n in d if 0.0005 < le < float("inf"))
    what = "scheduler waits" if "latencies" in name else "GC pauses"
    print("  %s %s: %d; %s" % (node, what, total, over))
PY
}
