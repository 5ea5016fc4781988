package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/gocql/gocql"
	"github.com/sibyldb/sibyl/internal/testutil"
)

// registerModel is each key's register as lightweight transactions must
// keep it (testutil.RegisterStep).
var registerModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		return testutil.GroupBy(history, func(op porcupine.Operation) int { return op.Input.(testutil.RegisterInput).Key })
	},
	Init:              func() any { return 0 },
	Step:              testutil.RegisterStep,
	DescribeOperation: testutil.DescribeRegisterOp,
}

// TestUnderKill runs, through three real processes (RF 3) while one
// process at a time is killed with SIGKILL and started again:
//   - conditional inserts, updates and deletes and SERIAL reads of two keys
//     from four gocql clients, whose history is then checked with
//     porcupine against a register per key (a write whose outcome never
//     came back, a timeout or a connection lost with its node, may or may
//     not have applied);
//   - logged batches, each writing three partitions, from two more
//     clients: once the batchlog has replayed what the killed coordinators
//     left, every batch is whole or absent at ALL, and every acknowledged
//     one whole;
//   - counter increments from two more: each counter reads at ALL at
//     least its acknowledged increments, and at most those and the ones
//     whose outcome was unknown.
func TestUnderKill(t *testing.T) {
	var out bytes.Buffer
	gossipPort := testutil.ClusterPort(t, 3)
	c := &Cluster{Dir: t.TempDir(), Out: &out, UpTimeout: time.Minute, Config: Config{Name: fmt.Sprintf("lwt test %d", gossipPort), Nodes: 3, Binary: sibyl,
		NativePort: testutil.ClusterPort(t, 3), AdminPort: testutil.ClusterPort(t, 3), GossipPort: gossipPort, StoragePort: testutil.ClusterPort(t, 3)}}
	defer Down(c)
	if err := Up(c); err != nil {
		t.Fatalf("up: %v\n%s", err, out.String())
	}
	cfg := gocql.NewCluster(Address(1), Address(2), Address(3))
	cfg.Port = c.NativePort
	cfg.ProtoVersion = 4
	cfg.Timeout = 5 * time.Second
	cfg.ConnectTimeout = 2 * time.Second
	cfg.ReconnectInterval = 500 * time.Millisecond
	cfg.RetryPolicy = &gocql.SimpleRetryPolicy{NumRetries: 0} // a conditional write retried is another write
	cfg.PoolConfig.HostSelectionPolicy = gocql.RoundRobinHostPolicy()
	cfg.Consistency = gocql.Quorum
	cfg.SerialConsistency = gocql.Serial
	session, err := cfg.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	for _, stmt := range []string{"CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE ks.reg (k int PRIMARY KEY, v int)"} {
		if err := session.Query(stmt).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	var (
		clock     atomic.Int64
		nextValue atomic.Int64
		mu        sync.Mutex
		history   []porcupine.Operation
		counts    = map[string]int{}
		failure   error
	)
	run := func(client int, in testutil.RegisterInput) (int, bool) {
		if in.Op != testutil.RegisterRead {
			in.Value = int(nextValue.Add(1))
		}
		call := clock.Add(1)
		o, kind, err := registerOperation(session, in)
		ret := clock.Add(1)
		mu.Lock()
		defer mu.Unlock()
		counts[kind]++
		switch {
		case err != nil:
			if failure == nil {
				failure = fmt.Errorf("client %d, %+v: %w", client, in, err)
			}
			return 0, false
		case kind == "skipped":
			return 0, false
		case o.Unknown:
			ret = math.MaxInt64
		}
		history = append(history, porcupine.Operation{ClientId: client, Input: in, Call: call, Output: o, Return: ret})
		switch {
		case o.Unknown:
			return 0, false
		case !o.Applied:
			return o.Seen, true
		case in.Op == testutil.RegisterDelete:
			return 0, true
		}
		return in.Value, true
	}
	const keys, clients = 2, 4
	stop := make(chan struct{})
	var wg sync.WaitGroup
	batches := runBatches(session, stop, &wg)
	counters := runCounters(session, stop, &wg)
	for client := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(client), 17))
			seen := map[int]int{}
			for {
				select {
				case <-stop:
					return
				default:
				}
				k := r.IntN(keys)
				in := testutil.RegisterInput{Key: k, Old: seen[k]}
				switch x := r.IntN(100); {
				case x < 25:
					in.Op = testutil.RegisterInsert
				case x < 60:
					in.Op = testutil.RegisterUpdate
				case x < 75:
					in.Op = testutil.RegisterDelete
				default:
					in.Op = testutil.RegisterRead
				}
				if v, ok := run(client, in); ok {
					seen[k] = v
				}
			}
		}()
	}
	// The nemesis: a node killed every few seconds, started again soon
	// after, none down at the end.
	nemesis := rand.New(rand.NewPCG(3, 3))
	for round := range 4 {
		time.Sleep(2 * time.Second)
		k := 1 + nemesis.IntN(3)
		pid, ok := c.pid(k)
		if !ok {
			t.Fatalf("round %d: node%d is not running", round, k)
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		for alive(pid) {
			time.Sleep(20 * time.Millisecond)
		}
		os.Remove(c.pidFile(k))
		time.Sleep(time.Duration(500+nemesis.IntN(1500)) * time.Millisecond)
		if err := c.Start(k); err != nil {
			t.Fatalf("restarting node%d: %v", k, err)
		}
	}
	time.Sleep(2 * time.Second)
	close(stop)
	wg.Wait()
	// Once every node is back, a serial read of each key pins down the
	// writes whose outcome was unknown.
	for k := range keys {
		for try := 0; ; try++ {
			if _, ok := run(clients, testutil.RegisterInput{Op: testutil.RegisterRead, Key: k}); ok {
				break
			}
			if try == 20 {
				t.Fatalf("no serial read of key %d succeeded with every node back", k)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if failure != nil {
		t.Fatal(failure)
	}
	if counts["applied"] == 0 || counts["refused"] == 0 || counts["read"] == 0 {
		t.Fatalf("the run exercised too little: %v", counts)
	}
	checkBatches(t, session, batches)
	checkCounters(t, session, counters)
	res, info := porcupine.CheckOperationsVerbose(registerModel, history, time.Minute)
	if res != porcupine.Ok {
		path := filepath.Join(t.TempDir(), "cas.html")
		if f, err := os.Create(path); err == nil {
			_ = porcupine.Visualize(registerModel, info, f)
			_ = f.Close()
		}
		t.Fatalf("the history of %d operations is %v (not linearizable); visualization: %s; %v", len(history), res, path, counts)
	}
	t.Logf("%d operations, linearizable, 4 kills: %v", len(history), counts)
}

// batchOutcome is a logged batch a client sent, and whether it was
// acknowledged.
type batchOutcome struct {
	id    int
	acked bool
}

// batchPartitions is how many partitions each logged batch writes.
const batchPartitions = 3

// runBatches has two clients send logged batches until stop: batch id
// writes id to the rows (id, 0) ... (id, batchPartitions-1) of ks.batched,
// each in a partition of its own. It returns what they sent, filled in
// once wg is done.
func runBatches(s *gocql.Session, stop <-chan struct{}, wg *sync.WaitGroup) *[]batchOutcome {
	if err := s.Query("CREATE TABLE ks.batched (k int, part int, v int, PRIMARY KEY ((k, part)))").Exec(); err != nil {
		panic(err)
	}
	var mu sync.Mutex
	out := new([]batchOutcome)
	var next atomic.Int64
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				id := int(next.Add(1))
				b := s.NewBatch(gocql.LoggedBatch)
				for part := range batchPartitions {
					b.Query("INSERT INTO ks.batched (k, part, v) VALUES (?, ?, ?)", id, part, id)
				}
				err := s.ExecuteBatch(b)
				mu.Lock()
				*out = append(*out, batchOutcome{id, err == nil})
				mu.Unlock()
				// A batch refused at once (its batchlog holder just died)
				// is not worth many more: the check reads every batch.
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}
	return out
}

// checkBatches waits for the batchlog's replays (two write timeouts, then
// the next round, every 10 s) and checks every batch at ALL: whole or
// absent, and whole if acknowledged.
func checkBatches(t *testing.T, s *gocql.Session, batches *[]batchOutcome) {
	t.Helper()
	time.Sleep(25 * time.Second)
	acked, whole := 0, 0
	for _, b := range *batches {
		found := 0
		for part := range batchPartitions {
			var v int
			err := s.Query("SELECT v FROM ks.batched WHERE k = ? AND part = ?", b.id, part).Consistency(gocql.All).Scan(&v)
			switch {
			case err == nil && v == b.id:
				found++
			case err != nil && !errors.Is(err, gocql.ErrNotFound):
				t.Fatalf("reading batch %d at ALL: %v", b.id, err)
			}
		}
		switch {
		case found != 0 && found != batchPartitions:
			t.Fatalf("batch %d (acknowledged: %v) is in %d of its %d partitions", b.id, b.acked, found, batchPartitions)
		case b.acked && found == 0:
			t.Fatalf("acknowledged batch %d is in none of its partitions", b.id)
		}
		if b.acked {
			acked++
		}
		if found == batchPartitions {
			whole++
		}
	}
	if acked == 0 {
		t.Fatal("no logged batch was acknowledged")
	}
	t.Logf("%d logged batches, %d acknowledged, %d whole, none in part", len(*batches), acked, whole)
}

// registerOperation runs one register operation through gocql: kind is
// applied, refused or read, unknown for a write whose outcome is not
// known, or skipped for one that certainly did nothing (Unavailable, a
// read that failed). An error is an answer no client should get.
func registerOperation(s *gocql.Session, in testutil.RegisterInput) (out testutil.RegisterOutput, kind string, err error) {
	literal := func(v int) any {
		if v == 0 {
			return nil
		}
		return v
	}
	var q *gocql.Query
	switch in.Op {
	case testutil.RegisterInsert:
		q = s.Query("INSERT INTO ks.reg (k, v) VALUES (?, ?) IF NOT EXISTS", in.Key, in.Value)
	case testutil.RegisterUpdate:
		q = s.Query("UPDATE ks.reg SET v = ? WHERE k = ? IF v = ?", in.Value, in.Key, literal(in.Old))
	case testutil.RegisterDelete:
		q = s.Query("DELETE FROM ks.reg WHERE k = ? IF v = ?", in.Key, literal(in.Old))
	case testutil.RegisterRead:
		var v *int
		err := s.Query("SELECT v FROM ks.reg WHERE k = ?", in.Key).Consistency(gocql.Consistency(gocql.Serial)).Scan(&v)
		switch {
		case errors.Is(err, gocql.ErrNotFound):
			return out, "read", nil
		case err == nil:
			if v != nil {
				out.Seen = *v
			}
			return out, "read", nil
		case clientError(err):
			return out, "", err
		}
		return out, "skipped", nil
	}
	current := map[string]any{}
	applied, err := q.MapScanCAS(current)
	switch {
	case err == nil:
	case clientError(err):
		return out, "", err
	default:
		var unavailable *gocql.RequestErrUnavailable
		if errors.As(err, &unavailable) {
			return out, "skipped", nil
		}
		return testutil.RegisterOutput{Unknown: true}, "unknown", nil
	}
	if applied {
		return testutil.RegisterOutput{Applied: true}, "applied", nil
	}
	if v, ok := current["v"].(int); ok {
		out.Seen = v
	}
	return out, "refused", nil
}

// clientError reports whether err is an answer that says the statement,
// not the cluster, was wrong, or that the server failed: no client of a
// working cluster should get one.
func clientError(err error) bool {
	var re gocql.RequestError
	if !errors.As(err, &re) {
		return false
	}
	switch re.Code() {
	case gocql.ErrCodeSyntax, gocql.ErrCodeInvalid, gocql.ErrCodeServer, gocql.ErrCodeProtocol, gocql.ErrCodeUnauthorized, gocql.ErrCodeConfig:
		return true
	}
	return false
}

// counterOutcomes are, by counter, the increments acknowledged and those
// whose outcome is unknown.
type counterOutcomes struct {
	mu             sync.Mutex
	acked, unknown [3]int64
}

// runCounters has two clients add 1 to one of three counters of
// ks.counts at QUORUM until stop, and counts what became of each.
func runCounters(s *gocql.Session, stop <-chan struct{}, wg *sync.WaitGroup) *counterOutcomes {
	if err := s.Query("CREATE TABLE ks.counts (k int PRIMARY KEY, n counter)").Exec(); err != nil {
		panic(err)
	}
	out := &counterOutcomes{}
	for client := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := (client + i) % len(out.acked)
				err := s.Query("UPDATE ks.counts SET n = n + 1 WHERE k = ?", k).Exec()
				var unavailable *gocql.RequestErrUnavailable
				out.mu.Lock()
				switch {
				case err == nil:
					out.acked[k]++
				case errors.As(err, &unavailable):
				default:
					out.unknown[k]++
				}
				out.mu.Unlock()
				time.Sleep(5 * time.Millisecond)
			}
		}()
	}
	return out
}

// checkCounters reads each counter at ALL.
func checkCounters(t *testing.T, s *gocql.Session, out *counterOutcomes) {
	t.Helper()
	total := int64(0)
	for k := range out.acked {
		var n int64
		if err := s.Query("SELECT n FROM ks.counts WHERE k = ?", k).Consistency(gocql.All).Scan(&n); err != nil && !errors.Is(err, gocql.ErrNotFound) {
			t.Fatalf("reading counter %d at ALL: %v", k, err)
		}
		if n < out.acked[k] || n > out.acked[k]+out.unknown[k] {
			t.Fatalf("counter %d reads %d at ALL: %d increments acknowledged, %d unknown", k, n, out.acked[k], out.unknown[k])
		}
		total += out.acked[k]
	}
	if total == 0 {
		t.Fatal("no counter increment was acknowledged")
	}
	t.Logf("counters: %v acknowledged, %v unknown, none lost", out.acked, out.unknown)
}
