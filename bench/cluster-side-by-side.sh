#!/usr/bin/env bash
# Two sibyl builds side by side on a local three-node cluster: QUORUM
# writes, then QUORUM reads (RF 3, token-aware, 64 threads, 15 s each,
# 100,000 keys) on a fresh `sibyl cluster up` of each build in turn, the
# order alternating from round to round. The client waits 5 s after up so
# that every node is in every view whichever build's up it is. Each line:
# round, build, write ops/s, read ops/s, reads each node coordinated (a
# third each when the client reaches all three); then the ratios of the
# sums, B over A.
# Usage: bench/cluster-side-by-side.sh A_BINARY B_BINARY [ROUNDS, default 6]
set -euo pipefail
a=$1 b=$2 rounds=${3:-6}
ports=(--native-transport-port 29042 --admin-port 27199 --gossip-port 27001 --storage-port 27000)
common=(--nodes 127.0.0.1,127.0.0.2,127.0.0.3 --port 29042 --consistency QUORUM --replication-factor 3 --token-aware
	--threads 64 --duration 15s --keys 100000)
out=$(mktemp)
for round in $(seq 1 "$rounds"); do
	order=("A:$a" "B:$b")
	if ((round % 2 == 0)); then order=("B:$b" "A:$a"); fi
	for entry in "${order[@]}"; do
		name=${entry%%:*} bin=${entry#*:} dir=$(mktemp -d)
		"$bin" cluster up --nodes 3 --dir "$dir/c" "${ports[@]}" >/dev/null
		sleep 5
		w=$("$bin" stress write "${common[@]}" 2>&1 | awk '$1=="insert"{print $3}')
		r=$("$bin" stress read "${common[@]}" 2>&1 | awk '$1=="read"{print $3}')
		c=$(for k in 1 2 3; do curl -s "http://127.0.0.$k:27199/metrics" | awk '/^sibyl_coordinator_requests_total\{kind="read"\}/{print $2}'; done | paste -sd/)
		echo "$round $name $w $r $c" | tee -a "$out"
		"$bin" cluster down --dir "$dir/c" >/dev/null
		rm -rf "$dir"
	done
done
awk '{w[$2]+=$3; r[$2]+=$4} END {printf "B/A: writes %.2f, reads %.2f\n", w["B"]/w["A"], r["B"]/r["A"]}' "$out"
rm -f "$out"
