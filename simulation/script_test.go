package simulation

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/sibyldb/sibyl/cql/exec"
	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/node"
	"github.com/sibyldb/sibyl/ring"
	"github.com/sibyldb/sibyl/schema"
	"github.com/sibyldb/sibyl/storage"
	"github.com/sibyldb/sibyl/tracing"
)

// TestScripts runs the cluster scripts in testdata: each a file of steps
// and the outcomes they must have (cockroachdb/datadriven's format; run
// with -rewrite to take the outcomes as they are). The commands:
//
//	cluster nodes=N [dcs=dc1:3,dc2:3] [seed=S] [snapshot-entries=E] [hint-window=D]
//	                                              start N nodes, 127.0.0.1 to .N (a metadata snapshot every E entries,
//	                                              max_hint_window D)
//	exec node=K [cl=LEVEL]                        run the input's statements on node K
//	local node=K                                  read the input's SELECT from node K's own data alone
//	crash node=K | restart node=K                 stop node K as a crash would; start it again
//	crash-on node=K verb=VERB                     node K crashes when the next request of VERB reaches it
//	disk-fail node=K | disk-heal node=K           every write and sync of node K's files fails; succeeds again
//	partition nodes=K,L                           K and L on one side, every other node on the other
//	cut a=K b=L | heal                            cut one link; remove every cut and partition
//	delay from=K to=L d=DURATION                  what K sends L takes d on its way (d=0: no delay)
//	wait for=DURATION                             let the cluster's time run (gossip, timeouts, late messages)
//	settle                                        wait (up to a minute) until every node's gossip sees up exactly the nodes up and reachable, and hints are delivered
//	membership                                    each node's view of the others, as its gossip sees them
//	concurrent                                    run the input's lines "K: STATEMENT" at once, each on its node; the outcomes, sorted
//	exec node=K async                             start the input's statement on node K, and go on; await gives its outcome
//	await                                         the outcomes of the statements started async, in the order started
//	policy node=K partitioned=refuse|serve        node K's partitioned_node_policy
//	metadata                                      each node's view of the metadata log: voters, schema epoch, whether partitioned
//	schema                                        each node's user tables, and whether the nodes up agree on the schema and its ids
//
// Each script runs in a synctest bubble: its time is the bubble's, and
// runs only while the cluster waits.
func TestScripts(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		inBubble(t, func(t *testing.T) { runScript(t, path) })
	})
}

func runScript(t *testing.T, path string) {
	var c *Cluster
	var started []chan string // the async statements' outcomes
	defer func() {
		if c != nil {
			c.Close()
		}
	}()
	datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd != "cluster" && c == nil {
			d.Fatalf(t, "%s before cluster", d.Cmd)
		}
		switch d.Cmd {
		case "cluster":
			var err error
			if c, err = New(scriptConfig(t, d)); err != nil {
				d.Fatalf(t, "%v", err)
			}
			return "ok"
		case "exec":
			if d.HasArg("async") {
				n, cl, stmt, out := scriptNode(t, d, c), level(t, d), strings.TrimSpace(d.Input), make(chan string, 1)
				started = append(started, out)
				go func() { out <- outcome(n.Exec(stmt, cl)) }()
				return "started"
			}
			return runStatements(t, d, scriptNode(t, d, c), level(t, d))
		case "await":
			var out []string
			for _, ch := range started {
				out = append(out, <-ch)
			}
			started = nil
			return strings.Join(out, "\n")
		case "concurrent":
			return runConcurrently(t, d, c)
		case "policy":
			var policy string
			d.ScanArgs(t, "partitioned", &policy)
			if policy != "refuse" && policy != "serve" {
				d.Fatalf(t, "partitioned=%s: refuse or serve", policy)
			}
			scriptNode(t, d, c).SetPartitionedPolicy(policy == "refuse")
			return "ok"
		case "metadata":
			return c.MetadataViews()
		case "schema":
			return c.SchemaViews()
		case "local":
			n := scriptNode(t, d, c)
			s := exec.NewSession(localOnly{n})
			res, err := s.QueryText(strings.TrimSpace(d.Input), exec.QueryParams{Consistency: request.One})
			return outcome(res, err)
		case "crash":
			return done(scriptNode(t, d, c).Crash())
		case "restart":
			return done(scriptNode(t, d, c).Restart())
		case "disk-fail":
			scriptNode(t, d, c).FailDisk(true)
			return "ok"
		case "disk-heal":
			scriptNode(t, d, c).FailDisk(false)
			return "ok"
		case "crash-on":
			var verb string
			d.ScanArgs(t, "verb", &verb)
			v, ok := verbs[verb]
			if !ok {
				d.Fatalf(t, "no verb %s", verb)
			}
			scriptNode(t, d, c).CrashOn(v)
			return "ok"
		case "partition":
			var list string
			d.ScanArgs(t, "nodes", &list)
			var side []ring.Endpoint
			for _, k := range strings.Split(list, ",") {
				side = append(side, address(t, d, k))
			}
			c.Partition(side...)
			return "ok"
		case "cut":
			var a, b string
			d.ScanArgs(t, "a", &a)
			d.ScanArgs(t, "b", &b)
			c.Cut(address(t, d, a), address(t, d, b))
			return "ok"
		case "heal":
			c.Heal()
			return "ok"
		case "delay":
			var from, to string
			d.ScanArgs(t, "from", &from)
			d.ScanArgs(t, "to", &to)
			c.Delay(address(t, d, from), address(t, d, to), duration(t, d, "d"))
			return "ok"
		case "wait":
			time.Sleep(duration(t, d, "for"))
			c.Settle()
			return "ok"
		case "settle":
			return done(c.AwaitMembership(time.Minute))
		case "membership":
			return c.Membership()
		}
		d.Fatalf(t, "unknown command %s", d.Cmd)
		return ""
	})
}

// runConcurrently runs each line "K: STATEMENT" of the input on node K,
// all at once, and gives the outcomes sorted (which of two conflicting
// statements wins is the race's).
func runConcurrently(t *testing.T, d *datadriven.TestData, c *Cluster) string {
	lines := strings.Split(strings.TrimSpace(d.Input), "\n")
	out := make([]string, len(lines))
	var wg sync.WaitGroup
	for i, line := range lines {
		k, stmt, ok := strings.Cut(line, ":")
		n := c.Node(address(t, d, strings.TrimSpace(k)))
		if !ok || n == nil {
			d.Fatalf(t, "%q is not K: STATEMENT", line)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = outcome(n.Exec(strings.TrimSpace(stmt), request.Quorum))
		}()
	}
	wg.Wait()
	slices.Sort(out)
	return strings.Join(out, "\n")
}

func duration(t *testing.T, d *datadriven.TestData, arg string) time.Duration {
	var text string
	d.ScanArgs(t, arg, &text)
	v, err := time.ParseDuration(text)
	if err != nil {
		d.Fatalf(t, "%s: %v", arg, err)
	}
	return v
}

var verbs = map[string]messaging.Verb{"MUTATION": messaging.VerbMutation, "READ": messaging.VerbRead,
	"RANGE_READ": messaging.VerbRangeRead, "HINT": messaging.VerbHint, "METADATA": messaging.VerbMetadata,
	"METADATA_JOIN": messaging.VerbMetadataJoin, "METADATA_WAIT": messaging.VerbMetadataWait}

func scriptConfig(t *testing.T, d *datadriven.TestData) Config {
	var n int
	d.ScanArgs(t, "nodes", &n)
	cfg := Config{Seed: 1}
	if d.HasArg("seed") {
		d.ScanArgs(t, "seed", &cfg.Seed)
	}
	if d.HasArg("snapshot-entries") {
		d.ScanArgs(t, "snapshot-entries", &cfg.SnapshotEntries)
	}
	if d.HasArg("hint-window") {
		var window string
		d.ScanArgs(t, "hint-window", &window)
		w, err := time.ParseDuration(window)
		if err != nil {
			d.Fatalf(t, "hint-window: %v", err)
		}
		cfg.Handoff.MaxWindow = w
	}
	dcOf := func(int) string { return "dc1" }
	if d.HasArg("dcs") {
		var spec string
		d.ScanArgs(t, "dcs", &spec)
		var bounds []int
		var names []string
		total := 0
		for _, part := range strings.Split(spec, ",") {
			name, count, ok := strings.Cut(part, ":")
			k, err := strconv.Atoi(count)
			if !ok || err != nil {
				d.Fatalf(t, "dcs: %q is not name:count", part)
			}
			total += k
			bounds, names = append(bounds, total), append(names, name)
		}
		if total != n {
			d.Fatalf(t, "dcs place %d nodes of %d", total, n)
		}
		dcOf = func(k int) string {
			for i, b := range bounds {
				if k <= b {
					return names[i]
				}
			}
			return ""
		}
	}
	for k := 1; k <= n; k++ {
		cfg.Nodes = append(cfg.Nodes, NodeConfig{Name: ring.Endpoint(fmt.Sprintf("127.0.0.%d", k)), DataCenter: dcOf(k), Rack: "rack1"})
	}
	return cfg
}

func address(t *testing.T, d *datadriven.TestData, k string) ring.Endpoint {
	if _, err := strconv.Atoi(k); err != nil {
		d.Fatalf(t, "node %q is not a number", k)
	}
	return ring.Endpoint("127.0.0." + k)
}

func scriptNode(t *testing.T, d *datadriven.TestData, c *Cluster) *Node {
	var k string
	d.ScanArgs(t, "node", &k)
	n := c.Node(address(t, d, k))
	if n == nil {
		d.Fatalf(t, "no node %s", k)
	}
	return n
}

var levels = map[string]request.Consistency{}

func init() {
	for l := request.Any; l.Valid(); l++ {
		levels[l.String()] = l
	}
}

func level(t *testing.T, d *datadriven.TestData) request.Consistency {
	if !d.HasArg("cl") {
		return request.One
	}
	var name string
	d.ScanArgs(t, "cl", &name)
	l, ok := levels[name]
	if !ok {
		d.Fatalf(t, "no consistency level %s", name)
	}
	return l
}

// runStatements runs each line of the input as a statement and gives
// each outcome on a line.
func runStatements(t *testing.T, d *datadriven.TestData, n *Node, cl request.Consistency) string {
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		res, err := n.Exec(line, cl)
		out = append(out, outcome(res, err))
	}
	return strings.Join(out, "\n")
}

// outcome spells out a statement's result: its rows (column=value), "ok"
// for a write or DDL, or the error a client would get with its fields.
func outcome(res *exec.Result, err error) string {
	if err != nil {
		var e *exec.Error
		if !errors.As(err, &e) {
			return "error: " + err.Error()
		}
		s := fmt.Sprintf("%s: %s", codeNames[e.Code], e.Message)
		if r := e.Replica; r != nil {
			cl := request.Consistency(r.Consistency)
			switch e.Code {
			case exec.Unavailable:
				s += fmt.Sprintf(" (%s: required %d, alive %d)", cl, r.BlockFor, r.Received)
			case exec.ReadFailure, exec.WriteFailure:
				s += fmt.Sprintf(" (%s: received %d, block for %d, failures %d)", cl, r.Received, r.BlockFor, r.NumFailures)
			default:
				s += fmt.Sprintf(" (%s: received %d, block for %d)", cl, r.Received, r.BlockFor)
			}
		}
		return s
	}
	if res.Kind != exec.RowsResult {
		return "ok"
	}
	if len(res.Rows) == 0 {
		return "no rows"
	}
	var rows []string
	for _, row := range res.Rows {
		var cells []string
		for i, v := range row {
			text := "null"
			if v != nil {
				text = res.Columns[i].Type.Format(v)
			}
			cells = append(cells, res.Columns[i].Name+"="+text)
		}
		rows = append(rows, strings.Join(cells, " "))
	}
	return strings.Join(rows, "\n")
}

var codeNames = map[exec.ErrorCode]string{exec.ServerError: "ServerError", exec.Invalid: "Invalid", exec.Unavailable: "Unavailable",
	exec.WriteTimeout: "WriteTimeout", exec.ReadTimeout: "ReadTimeout", exec.ReadFailure: "ReadFailure", exec.WriteFailure: "WriteFailure",
	exec.TruncateError: "TruncateError", exec.SyntaxError: "SyntaxError", exec.ConfigError: "ConfigError", exec.AlreadyExists: "AlreadyExists"}

func done(err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return "ok"
}

// localOnly reads a node's own data, whatever the ring says it should
// hold: what a replica has, not what a coordinator would answer.
type localOnly struct{ n *Node }

// engine is the node's engine, a whole node's included.
func (l localOnly) engine() *storage.Engine {
	if whole := l.n.Whole(); whole != nil {
		return whole.Engine()
	}
	return l.n.engine
}

func (l localOnly) Schema() *schema.Schema {
	if whole := l.n.Whole(); whole != nil {
		return whole.Schema()
	}
	return l.n.currentSchema()
}
func (l localOnly) ApplySchema(*schema.Schema, []*mutation.Mutation) error {
	return errors.New("local reads only")
}
func (l localOnly) Apply([]*mutation.Mutation, request.Consistency, *tracing.Trace) error {
	return errors.New("local reads only")
}
func (l localOnly) ApplyLogged([]*mutation.Mutation, request.Consistency, *tracing.Trace) error {
	return errors.New("local reads only")
}
func (l localOnly) ApplyCounters([]*mutation.Mutation, request.Consistency, *tracing.Trace) error {
	return errors.New("local reads only")
}
func (l localOnly) ReadPartition(t *schema.Table, r request.PartitionRead) (*request.Partition, error) {
	return node.CoordinatorEngine(l.engine()).Read(t.ID, r.Key, r.Slice)
}
func (l localOnly) Scan(t *schema.Table, r request.RangeRead) ([]*request.Partition, error) {
	return node.CoordinatorEngine(l.engine()).Scan(t.ID, r)
}
func (l localOnly) Truncate(*schema.Table) error { return errors.New("local reads only") }
func (l localOnly) CAS(*schema.Table, request.CAS) (*request.Partition, bool, error) {
	return nil, false, errors.New("local reads only")
}
