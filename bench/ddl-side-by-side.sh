#!/usr/bin/env bash
# Two sibyl builds side by side on a local three-node cluster: CREATE
# TABLE through gocql, with the schema agreement wait gocql makes after
# each (BenchmarkClusterDDL, 30 tables a round), on a fresh `sibyl cluster
# up` of each build in turn, the order alternating from round to round.
# Each line: round, build, median ms, p90 ms.
# Usage: bench/ddl-side-by-side.sh A_BINARY B_BINARY [ROUNDS, default 4]
set -euo pipefail
a=$1 b=$2 rounds=${3:-4}
ports=(--native-transport-port 29042 --admin-port 27199 --gossip-port 27001 --storage-port 27000)
for round in $(seq 1 "$rounds"); do
	order=("A:$a" "B:$b")
	if ((round % 2 == 0)); then order=("B:$b" "A:$a"); fi
	for entry in "${order[@]}"; do
		name=${entry%%:*} bin=${entry#*:} dir=$(mktemp -d)
		"$bin" cluster up --nodes 3 --dir "$dir/c" "${ports[@]}" >/dev/null
		sleep 5
		line=$(SIBYL_BENCH_DDL_HOSTS=127.0.0.1,127.0.0.2,127.0.0.3 SIBYL_BENCH_DDL_PORT=29042 \
			go test -run '^$' -bench BenchmarkClusterDDL -benchtime 1x ./bench/ | awk '/^BenchmarkClusterDDL/{print $5, $7}')
		echo "$round $name $line"
		"$bin" cluster down --dir "$dir/c" >/dev/null
		rm -rf "$dir"
	done
done
