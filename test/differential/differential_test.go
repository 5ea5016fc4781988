package differential

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/rs/zerolog"
	"github.com/sibyldb/sibyl/internal/testutil"
	"github.com/sibyldb/sibyl/node"
)

var (
	seeds    = flag.Int("differential.seeds", 6, "how many seeds TestDifferential runs")
	steps    = flag.Int("differential.steps", 120, "statements per seed")
	firstArg = flag.Uint64("differential.seed", 1, "the first seed")
	duration = flag.Duration("differential.long", 0, "run seeds one after another for this long instead of -differential.seeds")
)

// TestMain runs the child node instead of the tests when TestDifferential
// starts this binary as one.
func TestMain(m *testing.M) {
	if dir := os.Getenv("SIBYL_DIFFERENTIAL_NODE"); dir != "" {
		childNode(dir)
		return
	}
	os.Exit(m.Run())
}

// childNode runs a node in dir on the ports the parent gave, says
// "ready", and serves until SIGTERM (a clean stop) or SIGKILL.
func childNode(dir string) {
	native, _ := strconv.Atoi(os.Getenv("SIBYL_DIFFERENTIAL_NATIVE"))
	admin, _ := strconv.Atoi(os.Getenv("SIBYL_DIFFERENTIAL_ADMIN"))
	logger := zerolog.New(os.Stderr).Level(zerolog.WarnLevel)
	n, err := node.Open(node.Config{DataDir: dir, NativePort: native, AdminPort: admin, Logger: &logger})
	if err == nil {
		_, err = n.StartNative()
	}
	if err == nil {
		_, err = n.StartAdmin()
	}
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("ready")
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM)
	<-stop
	if err := n.Close(); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// nodeProcess is a child node the test stops, kills and starts again.
type nodeProcess struct {
	t                     *testing.T
	dir                   string
	nativePort, adminPort int
	cmd                   *exec.Cmd
	session               *gocql.Session
}

func (p *nodeProcess) start() {
	p.t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SIBYL_DIFFERENTIAL_NODE="+p.dir,
		"SIBYL_DIFFERENTIAL_NATIVE="+strconv.Itoa(p.nativePort), "SIBYL_DIFFERENTIAL_ADMIN="+strconv.Itoa(p.adminPort))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		p.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ready" {
		cmd.Process.Kill()
		cmd.Wait()
		p.t.Fatalf("the node does not start: %q %v", line, err)
	}
	p.cmd = cmd
	cluster := gocql.NewCluster("127.0.0.1")
	cluster.Port = p.nativePort
	cluster.Timeout = 10 * time.Second
	cluster.ConnectTimeout = 10 * time.Second
	cluster.Consistency = gocql.One
	if p.session, err = cluster.CreateSession(); err != nil {
		p.t.Fatal(err)
	}
}

// stop ends the node: cleanly (SIGTERM: it drains and flushes), or with
// SIGKILL.
func (p *nodeProcess) stop(kill bool) {
	p.t.Helper()
	p.session.Close()
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	p.cmd.Process.Signal(sig)
	err := p.cmd.Wait()
	if !kill && err != nil {
		p.t.Fatalf("the node's clean stop: %v", err)
	}
}

func (p *nodeProcess) admin(path string) {
	p.t.Helper()
	resp, err := http.Post("http://127.0.0.1:"+strconv.Itoa(p.adminPort)+path, "", nil)
	if err != nil {
		p.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		p.t.Fatalf("%s answered %d", path, resp.StatusCode)
	}
}

// TestDifferential runs random statements through gocql against a node
// and checks every result against the model, with flushes, compactions,
// clean restarts and kill -9 between statements. make test runs a few
// seeds; -differential.long runs seeds for as long as it is given
// (docs/testing.md).
func TestDifferential(t *testing.T) {
	p := &nodeProcess{t: t, dir: t.TempDir(), nativePort: testutil.FreePort(t), adminPort: testutil.FreePort(t)}
	p.start()
	defer func() {
		p.pt(t)
		p.stop(false)
	}()
	run := func(seed uint64) {
		if failed := !t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { runSeed(t, p, seed, *steps) }); failed {
			t.Fatalf("replay with: go test ./test/differential -run TestDifferential -differential.seed %d -differential.seeds 1 -differential.steps %d", seed, *steps)
		}
	}
	last := *firstArg
	for seed := range testutil.Seeds(*firstArg, *seeds, *duration) {
		run(seed)
		last = seed
	}
	t.Logf("ran seeds %d to %d, %d statements each", *firstArg, last, *steps)
}

func runSeed(t *testing.T, p *nodeProcess, seed uint64, n int) {
	f := newFuzzer(seed)
	m := newModel(f.t)
	p.pt(t)
	exec := func(q string) {
		if err := p.session.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, q := range f.ddl() {
		exec(q)
	}
	defer func() {
		if !t.Failed() {
			exec("DROP KEYSPACE " + f.t.keyspace)
		}
	}()
	var history []string
	for step := 0; step < n; step++ {
		g := f.g
		switch r := g.r.Float64(); {
		case r < 0.04:
			history = append(history, "flush")
			p.admin("/flush")
		case r < 0.06:
			history = append(history, "compact")
			p.admin("/compact")
		case r < 0.075:
			history = append(history, "restart")
			p.stop(false)
			p.start()
			p.pt(t)
		case r < 0.09:
			history = append(history, "kill -9")
			p.stop(true)
			p.start()
			p.pt(t)
		case r < 0.2:
			history = append(history, f.runBatch(t, p, m))
		default:
			history = append(history, f.runOne(t, p, m))
		}
		if t.Failed() {
			t.Logf("seed %d, step %d; schema:\n  %s", seed, step, strings.Join(f.ddl(), "\n  "))
			break
		}
		if err := f.verify(p, m); err != nil {
			start := max(0, len(history)-15)
			t.Fatalf("seed %d, step %d: %v\nschema:\n  %s\nlast steps:\n  %s", seed, step, err,
				strings.Join(f.ddl(), "\n  "), strings.Join(history[start:], "\n  "))
		}
	}
}

// pt points the process's helpers at the running subtest.
func (p *nodeProcess) pt(t *testing.T) { p.t = t }

// runOne sends one statement, checks that it is refused exactly when the
// model says it must be, and applies it to the model. It returns what it
// sent, for the report of a failure.
func (f *fuzzer) runOne(t *testing.T, p *nodeProcess, m *model) string {
	g := f.g
	var o *op
	switch r := g.r.Float64(); {
	case r < 0.03:
		if o = f.invalidOp(); o == nil {
			o = f.insert()
		}
	case r < 0.45:
		o = f.insert()
	case r < 0.8:
		o = f.update(false)
	default:
		o = f.delete()
	}
	rd := &renderer{t: f.t, prepared: o.invalid != 0 || !o.textOK() || g.chance(0.5)}
	st := rd.render(o)
	q := p.session.Query(st.cql, st.args...)
	if o.ts == tsInProtocol {
		q = q.WithTimestamp(o.w.ts)
	}
	err := q.Exec()
	desc := fmt.Sprintf("%s %v (prepared %v, ts %d)", st.cql, argsText(st.args), rd.prepared, o.w.ts)
	f.check(t, desc, o, err)
	m.apply(o)
	return desc
}

// runBatch sends two to four statements in one BATCH, logged or not, with
// the batch's timestamp or each statement's own.
func (f *fuzzer) runBatch(t *testing.T, p *nodeProcess, m *model) string {
	g := f.g
	kind := gocql.LoggedBatch
	word := "BEGIN BATCH"
	if g.chance(0.5) {
		kind, word = gocql.UnloggedBatch, "BEGIN UNLOGGED BATCH"
	}
	shared := g.chance(0.5)
	batchWrite := f.nextWrite(false)
	mode := f.tsMode()
	var ops []*op
	for i := 2 + g.pick(3); i > 0; i-- {
		var o *op
		switch g.pick(3) {
		case 0:
			o = f.insert()
		case 1:
			o = f.update(true)
		default:
			o = f.delete()
		}
		if shared {
			o.w, o.ts = write{ts: batchWrite.ts, ttl: o.w.ttl}, tsFromBatch
			if o.w.ttl > 0 {
				o.w.ttl = 0 // one timestamp for all: no expiring cells to tie
			}
		} else {
			o.ts = tsInText
		}
		ops = append(ops, o)
	}
	prepared := g.chance(0.5)
	for _, o := range ops {
		prepared = prepared || !o.textOK()
	}
	var desc []string
	var err error
	if prepared {
		b := p.session.NewBatch(kind)
		for _, o := range ops {
			rd := &renderer{t: f.t, prepared: true}
			st := rd.render(o)
			b.Query(st.cql, st.args...)
			desc = append(desc, st.cql+" "+argsText(st.args))
		}
		if shared {
			b = b.WithTimestamp(batchWrite.ts)
		}
		err = p.session.ExecuteBatch(b)
	} else {
		var stmts []string
		for _, o := range ops {
			rd := &renderer{t: f.t}
			stmts = append(stmts, rd.render(o).cql)
		}
		q := word
		if shared && mode == tsInText {
			q += " USING TIMESTAMP " + strconv.FormatInt(batchWrite.ts, 10)
		}
		q += " " + strings.Join(stmts, "; ") + " APPLY BATCH"
		desc = append(desc, q)
		query := p.session.Query(q)
		if shared && mode == tsInProtocol {
			query = query.WithTimestamp(batchWrite.ts)
		}
		err = query.Exec()
	}
	text := fmt.Sprintf("batch (prepared %v, shared ts %v %d): %s", prepared, shared, batchWrite.ts, strings.Join(desc, " | "))
	f.check(t, text, &op{}, err)
	for _, o := range ops {
		m.apply(o)
	}
	return text
}

func (f *fuzzer) check(t *testing.T, desc string, o *op, err error) {
	t.Helper()
	var re gocql.RequestError
	switch {
	case o.invalid == 0 && err != nil:
		t.Errorf("%s: %v", desc, err)
	case o.invalid != 0 && (!errors.As(err, &re) || re.Code() != o.invalid):
		t.Errorf("%s: %v, want error code %#x", desc, err, o.invalid)
	}
}

func argsText(args []any) string {
	parts := make([]string, len(args))
	for i, a := range args {
		switch a := a.(type) {
		case raw:
			parts[i] = bytesText(a)
		case nil:
			parts[i] = "null"
		default:
			if a == gocql.UnsetValue {
				parts[i] = "unset"
			} else {
				parts[i] = fmt.Sprint(a)
			}
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// rawResult keeps a column's bytes as the node sent them; nil for null.
type rawResult struct{ b []byte }

func (r *rawResult) UnmarshalCQL(_ gocql.TypeInfo, data []byte) error {
	if data == nil {
		r.b = nil
		return nil
	}
	r.b = append([]byte{}, data...)
	return nil
}

// verify reads the whole table and compares it with the model: the same
// partitions, each with the same rows in the same order, every value the
// same bytes.
func (f *fuzzer) verify(p *nodeProcess, m *model) error {
	cols := f.t.columns()
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.name
	}
	iter := p.session.Query("SELECT " + strings.Join(names, ", ") + " FROM " + f.t.qualified()).PageSize(7).Iter()
	got := map[string][]resultRow{}
	dest := make([]any, len(cols))
	vals := make([]rawResult, len(cols))
	for i := range dest {
		dest[i] = &vals[i]
	}
	for iter.Scan(dest...) {
		row := make(resultRow, len(cols))
		for i := range vals {
			row[i] = vals[i].b
		}
		k := keyOfBytes(row[:len(f.t.pk)])
		got[k] = append(got[k], row)
	}
	if err := iter.Close(); err != nil {
		return fmt.Errorf("scan: %w", err)
	}
	want := m.expected()
	diffs := f.pointRead(p, want, names)
	for _, k := range sortedKeys(want, got) {
		w, g := want[k], got[k]
		if len(w) != len(g) {
			diffs = append(diffs, fmt.Sprintf("partition %x: %d rows, want %d:\n    got  %s\n    want %s", k, len(g), len(w), rowsText(g), rowsText(w)))
			continue
		}
		for i := range w {
			for j := range w[i] {
				if !bytes.Equal(w[i][j], g[i][j]) || (w[i][j] == nil) != (g[i][j] == nil) {
					diffs = append(diffs, fmt.Sprintf("partition %x row %d column %s: got %s, want %s",
						k, i, names[j], bytesText(g[i][j]), bytesText(w[i][j])))
				}
			}
		}
	}
	if len(diffs) > 0 {
		if len(diffs) > 10 {
			diffs = append(diffs[:10], fmt.Sprintf("and %d more", len(diffs)-10))
		}
		return errors.New("the node and the model disagree:\n  " + strings.Join(diffs, "\n  "))
	}
	return nil
}

// pointRead reads one partition of the pool by its key in another
// spelling, in the table's clustering order or the reverse, and compares
// it with the model's.
func (f *fuzzer) pointRead(p *nodeProcess, want map[string][]resultRow, names []string) []string {
	g := f.g
	pk := f.pickPK()
	rd := &renderer{t: f.t, prepared: g.chance(0.5)}
	where := rd.where(&op{kind: opUpdate, pk: pk})
	q := "SELECT " + strings.Join(names, ", ") + " FROM " + f.t.qualified() + where
	reverse := len(f.t.ck) > 0 && g.chance(0.5)
	if reverse {
		dir := " DESC"
		if f.t.ck[0].desc {
			dir = " ASC"
		}
		q += " ORDER BY " + f.t.ck[0].name + dir
	}
	iter := p.session.Query(q, rd.st.args...).PageSize(3).Iter()
	cols := f.t.columns()
	dest := make([]any, len(cols))
	vals := make([]rawResult, len(cols))
	for i := range dest {
		dest[i] = &vals[i]
	}
	var got []resultRow
	for iter.Scan(dest...) {
		row := make(resultRow, len(cols))
		for i := range vals {
			row[i] = vals[i].b
		}
		got = append(got, row)
	}
	if err := iter.Close(); err != nil {
		return []string{fmt.Sprintf("%s %s: %v", q, argsText(rd.st.args), err)}
	}
	var pkBytes [][]byte
	for _, v := range pk {
		pkBytes = append(pkBytes, canon(v))
	}
	exp := append([]resultRow(nil), want[keyOfBytes(pkBytes)]...)
	if reverse {
		for i, j := 0, len(exp)-1; i < j; i, j = i+1, j-1 {
			exp[i], exp[j] = exp[j], exp[i]
		}
	}
	if rowsText(got) != rowsText(exp) {
		return []string{fmt.Sprintf("%s %s:\n    got  %s\n    want %s", q, argsText(rd.st.args), rowsText(got), rowsText(exp))}
	}
	return nil
}

func keyOfBytes(vals [][]byte) string {
	var b []byte
	for _, v := range vals {
		b = appendItem(b, v)
	}
	return string(b)
}

func sortedKeys(a, b map[string][]resultRow) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range []map[string][]resultRow{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

func bytesText(b []byte) string {
	if b == nil {
		return "null"
	}
	return fmt.Sprintf("0x%x", b)
}

func rowsText(rows []resultRow) string {
	var parts []string
	for _, r := range rows {
		var cells []string
		for _, c := range r {
			cells = append(cells, bytesText(c))
		}
		parts = append(parts, "("+strings.Join(cells, " ")+")")
	}
	return strings.Join(parts, " ")
}
