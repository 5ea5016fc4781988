# Sibyl's build. `make run` starts a node; `make test` builds and passes every test.
GO       ?= go
BIN      := bin/sibyl
VERSION  ?= 0.1.0-dev
LDFLAGS  := -X main.version=$(VERSION)
# Packages that start goroutines run once more under the race detector.
# gossip, node (which gossips in its cluster test) and simulation (whose
# nodes gossip through memberlist) stay out: memberlist v0.7.0 reads a
# node's protocol version outside its lock (hashicorp/memberlist#134), which
# the race detector reports in any test with several members whose
# suspicions are refuted (a partition, a restart). The packages they drive
# (coordinator, messaging, metadata) run under it on their own.
RACE_PKGS := ./commitlog/... ./memtable/... ./storage/... ./cql/native/... ./test/clients/... ./messaging/... ./coordinator/... ./metadata/...
# Storage packages run once more without the invariants tag, so both code paths are tested.
STORAGE_PKGS := ./commitlog/... ./memtable/... ./sstable/... ./storage/...

.PHONY: all build test test-long test-differential-long test-simulation-long lint bench bench-read bench-b2r bench-b3 bench-b3-cluster bench-b4 bench-b6 bench-b7 bench-lwt bench-counter bench-secure bench-vector run compat clean

all: build

build:
	CGO_ENABLED=0 $(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/sibyl

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null; git ls-files --others --exclude-standard '*.go' 2>/dev/null)); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags invariants ./...

# The differential test runs on its own after the rest: its node in a child
# process would otherwise take the CPU the cluster tests' timeouts count on.
test: build lint
	$(GO) test -tags invariants -count=1 $$($(GO) list ./... | grep -v /test/differential)
	$(GO) test -tags invariants -count=1 ./test/differential
	$(GO) test -count=1 $(STORAGE_PKGS)
	$(GO) test -race -count=1 $(RACE_PKGS)

# The long differential run from the wire down (see docs/testing.md).
DIFFERENTIAL_TIME ?= 1h
DIFFERENTIAL_SEED ?= 1000
test-differential-long:
	$(GO) test -v -count=1 -timeout 0 -run TestDifferential ./test/differential -differential.long $(DIFFERENTIAL_TIME) -differential.seed $(DIFFERENTIAL_SEED)

SIMULATION_TIME ?= 10m
SIMULATION_SEED ?= 1000
test-simulation-long:
	$(GO) test -v -count=1 -timeout 0 -run TestRandomized ./simulation -simulation.long $(SIMULATION_TIME) -simulation.seed $(SIMULATION_SEED)

# The long randomized model run (see docs/testing.md).
test-long:
	$(GO) test -tags invariants -count=1 -timeout 60m -run TestModel ./storage/ -model.long

# Built as the product is (CGO_ENABLED=0): with cgo, pebble's block cache
# allocates through C for both engines, which no shipped binary does.
# B7 is left to its own target: its load alone takes several minutes.
bench: build
	CGO_ENABLED=0 $(GO) test -run '^$$' -bench . -skip '^BenchmarkB7$$' -benchtime 1x -timeout 60m ./bench/

# B7: 20 million rows against plain pebble, then ten minutes of writes
# through the native protocol (bench/b7.sh); about 25 minutes and 8 GB of
# disk in the temporary directory.
bench-b7: build
	CGO_ENABLED=0 $(GO) test -run '^$$' -bench '^BenchmarkB7$$' -benchtime 1x -timeout 90m ./bench/
	bench/b7.sh

# A point read's CPU and allocations in the engine alone (storage's
# BenchmarkPointRead: from one SSTable, from the memtable).
bench-read:
	CGO_ENABLED=0 $(GO) test -run '^$$' -bench PointRead -benchtime 300000x -count 3 ./storage/

# B2r: one node under the shared raw pipelined client (INSERT and SELECT
# against the OPTIONS ceiling); about two minutes.
bench-b2r: build
	bench/b2r.sh

# B3 (the Dynamo-style workload) on one node through sibyl stress; about 15 minutes.
bench-b3: build
	bench/b3.sh

# B3 on a local three-node cluster (RF 3, QUORUM, a token-aware client).
bench-b3-cluster: build
	B3_NODES=3 bench/b3.sh

# B4 (one node against three, each under the same cgroup CPU quota; needs
# root and cgroup v1); about 10 minutes.
bench-b4: build
	bench/b4.sh

bench-b6: build
	bench/b6.sh

# Lightweight transactions, and counter increments, against plain QUORUM writes on three
# nodes (docs/benchmarks.md).
bench-lwt: build
	bench/vs-plain.sh lwt

bench-counter: build
	bench/vs-plain.sh counter

bench-secure: build
	bench/secure-side-by-side.sh

# Vector search: recall@10 against exact search and queries per second
# (docs/benchmarks.md); SIBYL_VEC_N, SIBYL_VEC_DIM and SIBYL_VEC_Q size it.
bench-vector: build
	CGO_ENABLED=0 $(GO) test -run '^$$' -bench VectorSearch -benchtime 1x -timeout 60m ./bench/

run: build
	$(BIN) server

# Real-client compatibility: the DataStax Node.js driver (npm) and the DataStax Python driver (Debian's
# python3-cassandra, installed by the script if missing) against a started
# bin/sibyl.
compat: build
	test/compat/run.sh

clean:
	rm -rf bin
