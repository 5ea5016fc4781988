package exec

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/sibyldb/sibyl/auth"
	"github.com/sibyldb/sibyl/cql"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/internal/testutil"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/schema"
	"github.com/sibyldb/sibyl/tracing"
)

// memCoordinator runs statements against testutil.MemStore, keeping the
// schema in its system_schema tables as a node does.
type memCoordinator struct {
	store  *testutil.MemStore
	schema *schema.Schema
	// before, when set, runs once at the next schema change, before it:
	// another client's change that commits first.
	before func()
	// readLevels are the levels of the partition reads asked of it.
	readLevels []request.Consistency
	// auth, when set, reloads its roles after each schema change, as a
	// node does.
	auth *auth.Service
}

func newMemCoordinator() *memCoordinator {
	return &memCoordinator{store: testutil.NewMemStore(), schema: schema.New(nil)}
}

func (c *memCoordinator) Schema() *schema.Schema { return c.schema }

func (c *memCoordinator) ApplySchema(base *schema.Schema, ms []*mutation.Mutation) error {
	if f := c.before; f != nil {
		c.before = nil
		f()
	}
	if base != nil && base.Epoch() != c.schema.Epoch() {
		return ErrSchemaChanged
	}
	c.store.Apply(ms...)
	user, err := schema.Load(c.rows, func(what, option string, err error) { panic(fmt.Sprintf("%s %s: %v", what, option, err)) })
	if err != nil {
		return err
	}
	if c.auth != nil {
		// Before the schema's epoch moves: a statement checked against
		// an epoch sees system_auth as of it, or later.
		roles, err := auth.LoadRoles(c.rows)
		if err != nil {
			return err
		}
		c.auth.SetRoles(roles)
	}
	c.schema = schema.New(user).WithEpoch(c.schema.Epoch() + 1)
	return nil
}

// rows reads every live row of a table.
func (c *memCoordinator) rows(def *schema.Table) ([]map[string]schema.Cell, error) {
	parts, err := c.store.Partitions(def.ID, time.Now().Unix())
	if err != nil {
		return nil, err
	}
	var rows []map[string]schema.Cell
	for _, p := range parts {
		for _, r := range p.Rows {
			cells, err := def.RowCells(p.Key, r.Clustering, r.Row, p.Static, time.Now().Unix())
			if err != nil {
				return nil, err
			}
			rows = append(rows, cells)
		}
	}
	return rows, nil
}

func (c *memCoordinator) Apply(ms []*mutation.Mutation, _ request.Consistency, tr *tracing.Trace) error {
	c.store.Apply(ms...)
	return nil
}

func (c *memCoordinator) ApplyLogged(ms []*mutation.Mutation, cl request.Consistency, tr *tracing.Trace) error {
	return c.Apply(ms, cl, tr)
}

// ApplyCounters leads every counter write here, as one replica would.
func (c *memCoordinator) ApplyCounters(ms []*mutation.Mutation, cl request.Consistency, tr *tracing.Trace) error {
	for _, m := range ms {
		t := c.schema.TableByID(m.Table)
		read := func(clustering []byte, column string) ([]byte, error) {
			q := request.PartitionRead{Key: m.Key, Slice: request.Slice{Now: time.Now().Unix()}}
			if clustering != nil {
				q.Start, q.End = mutation.StartBound(clustering, true), mutation.EndBound(clustering, true)
			}
			p, err := c.ReadPartition(t, q)
			if err != nil || p == nil {
				return nil, err
			}
			row := p.Static
			if clustering != nil && len(p.Rows) > 0 {
				row = p.Rows[0].Row
			} else if clustering != nil {
				row = nil
			}
			if row != nil {
				for _, cell := range row.Cells {
					if cell.Column == column && cell.Counter {
						return cell.Value, nil
					}
				}
			}
			return nil, nil
		}
		shards, err := m.CounterShards(mutation.CounterID{1}, read)
		if err != nil {
			return err
		}
		c.store.Apply(shards)
	}
	return nil
}

func (c *memCoordinator) partitions(t *schema.Table, now int64) ([]*request.Partition, error) {
	parts, err := c.store.Partitions(t.ID, now)
	if err != nil {
		return nil, err
	}
	out := make([]*request.Partition, len(parts))
	for i, p := range parts {
		out[i] = &request.Partition{Key: p.Key, Static: p.Static}
		for _, r := range p.Rows {
			out[i].Rows = append(out[i].Rows, request.Row{Clustering: r.Clustering, Row: r.Row})
		}
	}
	return out, nil
}

func (c *memCoordinator) ReadPartition(t *schema.Table, q request.PartitionRead) (*request.Partition, error) {
	c.readLevels = append(c.readLevels, q.Consistency)
	parts, err := c.partitions(t, q.Now)
	if err != nil {
		return nil, err
	}
	for _, p := range parts {
		if !bytes.Equal(p.Key, q.Key) {
			continue
		}
		var rows []request.Row
		for _, r := range p.Rows {
			if (q.Start == nil || bytes.Compare(r.Clustering, q.Start) >= 0) && (q.End == nil || bytes.Compare(r.Clustering, q.End) < 0) {
				rows = append(rows, r)
			}
		}
		if q.Reverse {
			slices.Reverse(rows)
		}
		if q.Limit > 0 && len(rows) > q.Limit {
			rows = rows[:q.Limit]
		}
		p.Rows = rows
		return p, nil
	}
	return nil, nil
}

// CAS reads each slice the conditions name, lets the statement decide and
// applies what it wrote: one client at a time, as the tests run.
func (c *memCoordinator) CAS(t *schema.Table, op request.CAS) (*request.Partition, bool, error) {
	var current *request.Partition
	for _, sl := range op.Reads {
		p, err := c.ReadPartition(t, request.PartitionRead{Key: op.Key, Slice: sl})
		if err != nil {
			return nil, false, err
		}
		if p == nil {
			continue
		}
		if current == nil {
			current = &request.Partition{Key: p.Key, Static: p.Static}
		}
		current.Rows = append(current.Rows, p.Rows...)
	}
	if current != nil && current.IsEmpty() {
		current = nil
	}
	ms, applied, err := op.Decide(current, time.Now().UnixMicro())
	if err != nil || !applied {
		return current, false, err
	}
	c.store.Apply(ms...)
	return nil, true, nil
}

func (c *memCoordinator) Truncate(t *schema.Table) error {
	c.store.Truncate(t.ID)
	return nil
}

func (c *memCoordinator) Scan(t *schema.Table, q request.RangeRead) ([]*request.Partition, error) {
	parts, err := c.partitions(t, q.Now)
	if err != nil {
		return nil, err
	}
	var out []*request.Partition
	rows := 0
	for _, p := range parts {
		tok := c.store.Partitioner.Token(p.Key)
		if q.From != nil && tok.Less(*q.From) || q.To != nil && !tok.Less(*q.To) ||
			q.After != nil && comparePartitions(c.store.Partitioner, p.Key, q.After) <= 0 {
			continue
		}
		if q.PerPartitionLimit > 0 && len(p.Rows) > q.PerPartitionLimit {
			p.Rows = p.Rows[:q.PerPartitionLimit]
		}
		if q.Limit > 0 && rows+len(p.Rows) >= q.Limit {
			p.Rows = p.Rows[:q.Limit-rows]
			return append(out, p), nil
		}
		rows += len(p.Rows)
		out = append(out, p)
	}
	return out, nil
}

var codeNames = map[ErrorCode]string{ServerError: "ServerError", SyntaxError: "SyntaxError", Unauthorized: "Unauthorized",
	Invalid: "Invalid", ConfigError: "ConfigurationException", AlreadyExists: "AlreadyExists", FunctionFailure: "FunctionFailure"}

// render prints a statement's outcome the way the testdata files expect,
// with its warnings after it.
func render(r *Result, err error) string {
	out := renderResult(r, err)
	if err == nil {
		for _, w := range r.Warnings {
			out += "\nwarning: " + w
		}
	}
	return out
}

func renderResult(r *Result, err error) string {
	if err != nil {
		if e, ok := err.(*Error); ok {
			return fmt.Sprintf("error %s: %s", codeNames[e.Code], e.Message)
		}
		if e, ok := err.(*cql.SyntaxError); ok {
			return fmt.Sprintf("error SyntaxError: %s", e.Error())
		}
		return "error (untyped): " + err.Error()
	}
	switch r.Kind {
	case SetKeyspaceResult:
		return "keyspace " + r.Keyspace
	case SchemaChangeResult:
		if r.Change == nil {
			return "no change"
		}
		return strings.TrimSpace(fmt.Sprintf("%s %s %s %s", r.Change.Change, r.Change.Target, r.Change.Keyspace, r.Change.Name))
	case RowsResult:
		var b strings.Builder
		for i, c := range r.Columns {
			if i > 0 {
				b.WriteString(" | ")
			}
			b.WriteString(c.Name)
		}
		for _, row := range r.Rows {
			b.WriteString("\n")
			for i, v := range row {
				if i > 0 {
					b.WriteString(" | ")
				}
				if v == nil {
					b.WriteString("null")
				} else {
					b.WriteString(r.Columns[i].Type.Format(v))
				}
			}
		}
		fmt.Fprintf(&b, "\n(%d rows)", len(r.Rows))
		return b.String()
	}
	return "ok"
}

// describe prints a keyspace's definition as the schema holds it.
func describe(ks *schema.Keyspace) string {
	var b strings.Builder
	fmt.Fprintf(&b, "keyspace %s durable_writes=%v replication=%v\n", ks.Name, ks.DurableWrites, sortedPairs(ks.Replication.Map()))
	for _, n := range slices.Sorted(maps.Keys(ks.Types)) {
		t := ks.Types[n]
		fmt.Fprintf(&b, "type %s", n)
		for i, f := range t.FieldNames {
			fmt.Fprintf(&b, " %s:%s", f, t.Params[i].SchemaString())
		}
		b.WriteByte('\n')
	}
	for _, n := range slices.Sorted(maps.Keys(ks.Tables)) {
		t := ks.Tables[n]
		o := t.Options
		fmt.Fprintf(&b, "table %s comment=%q gc_grace_seconds=%d default_time_to_live=%d compaction=%v\n",
			n, o.Comment, o.GCGraceSeconds, o.DefaultTimeToLive, sortedPairs(o.Compaction))
		for _, c := range t.Columns {
			fmt.Fprintf(&b, "  %s %s %s", c.Name, c.Type.SchemaString(), c.Kind)
			if c.Kind == schema.Clustering {
				fmt.Fprintf(&b, " %s", c.ClusteringOrder())
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// describePrepared prints what PREPARE tells a client.
func describePrepared(p *Prepared) string {
	var b strings.Builder
	spec := func(c ColumnSpec) string {
		return fmt.Sprintf("%s.%s.%s %s", c.Keyspace, c.Table, c.Name, c.Type.SchemaString())
	}
	var markers, cols []string
	for _, m := range p.Markers {
		markers = append(markers, spec(m))
	}
	for _, c := range p.Columns {
		cols = append(cols, spec(c))
	}
	fmt.Fprintf(&b, "markers [%s] pk %v columns [%s]\n", strings.Join(markers, ", "), p.PartitionKeyIndexes, strings.Join(cols, ", "))
	return b.String()
}

func sortedPairs(m map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+m[k])
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// TestDataDriven runs testdata/*: "exec" runs each statement of its input
// and prints one outcome per statement; "describe <keyspace>" prints the
// keyspace's definition; "prepare" prints what preparing each statement
// tells a client; "restart" reloads the schema from the stored rows,
// as a node's start-up does.
func TestDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		// A fixed clock, randomness and timeuuid node, fresh for each
		// file, make now(), uuid() and the current*() functions print
		// the same on every run whatever the other files do.
		saved := functionEnv
		functionEnv = &cqltype.FunctionEnv{
			Now:             func() time.Time { return time.Date(2024, 5, 6, 7, 8, 9, 123_000_000, time.UTC) },
			Rand:            rand.New(rand.NewPCG(1, 2)),
			ClockSeqAndNode: 0x8000_0000_0000_0001,
		}
		defer func() { functionEnv = saved }()
		c := newMemCoordinator()
		// A clock that moves a millisecond per reading: runs are repeatable,
		// and statements never share a millisecond (schema times such as a
		// column's drop are kept to the millisecond, as Cassandra keeps them).
		at := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
		clock := func() time.Time {
			at = at.Add(time.Millisecond)
			return at
		}
		s := NewSession(c)
		s.Now = clock
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "exec":
				stmts, err := cql.ParseAll(d.Input)
				if err != nil {
					return render(nil, err) + "\n"
				}
				var out strings.Builder
				params := QueryParams{Consistency: request.One} // as a driver's default
				if d.HasArg("page") {
					d.ScanArgs(t, "page", &params.PageSize)
				}
				for _, st := range stmts {
					r, err := s.Query(st, params)
					out.WriteString(render(r, err) + "\n")
				}
				return out.String()
			case "describe":
				var name string
				d.ScanArgs(t, "keyspace", &name)
				ks := c.Schema().Keyspace(name)
				if ks == nil {
					return "no keyspace " + name + "\n"
				}
				return describe(ks)
			case "prepare":
				stmts, err := cql.ParseAll(d.Input)
				if err != nil {
					return render(nil, err) + "\n"
				}
				var out strings.Builder
				for _, st := range stmts {
					p, err := s.Prepare(st)
					if err != nil {
						out.WriteString(render(nil, err) + "\n")
						continue
					}
					out.WriteString(describePrepared(p))
				}
				return out.String()
			case "restart":
				if err := c.ApplySchema(nil, nil); err != nil {
					return "error " + err.Error() + "\n"
				}
				s = NewSession(c)
				s.Now = clock
				s.SetAuth(c.auth)
				return "restarted\n"
			case "auth":
				// A node with PasswordAuthenticator and
				// CassandraAuthorizer, started with its default
				// superuser; the session logs in as it.
				c.auth = auth.NewService(auth.Config{Authenticator: auth.PasswordAuthenticator,
					Authorizer: auth.CassandraAuthorizer, BcryptCost: 4})
				ms, err := c.auth.DefaultSuperuserMutations(s.writer())
				if err == nil {
					err = c.ApplySchema(nil, ms)
				}
				if err != nil {
					return "error " + err.Error() + "\n"
				}
				s.SetAuth(c.auth)
				s.SetUser(auth.DefaultSuperuser)
				return "logged in as " + auth.DefaultSuperuser + "\n"
			case "login":
				var user, password string
				d.ScanArgs(t, "user", &user)
				d.ScanArgs(t, "password", &password)
				if err := c.auth.Authenticate(user, password); err != nil {
					return "refused: " + err.Error() + "\n"
				}
				s.SetUser(user)
				return "logged in as " + user + "\n"
			}
			t.Fatalf("unknown command %s", d.Cmd)
			return ""
		})
	})
}

// TestConflictingDDLMeetsTheWinner: a CREATE TABLE checked against a
// schema that another client's CREATE of the same table moves on from
// before it commits is checked again, and fails as the second of the two
// would: AlreadyExists, not a second table id.
func TestConflictingDDLMeetsTheWinner(t *testing.T) {
	c := newMemCoordinator()
	a, b := NewSession(c), NewSession(c)
	if _, err := a.Run("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"); err != nil {
		t.Fatal(err)
	}
	c.before = func() {
		if _, err := b.Run("CREATE TABLE ks.t (k int PRIMARY KEY, v text)"); err != nil {
			t.Fatal(err)
		}
	}
	_, err := a.Run("CREATE TABLE ks.t (k int PRIMARY KEY, v int)")
	var e *Error
	if !errors.As(err, &e) || e.Code != AlreadyExists {
		t.Fatalf("the second CREATE TABLE: %v, want AlreadyExists", err)
	}
	tab, err := c.Schema().Table("ks", "t")
	if err != nil || tab.Columns[1].Type.String() != "text" {
		t.Fatalf("the table is %v (%v), want the winner's", tab, err)
	}
	// IF NOT EXISTS makes the loser a no-op.
	c.before = func() {
		if _, err := b.Run("CREATE TABLE ks.u (k int PRIMARY KEY)"); err != nil {
			t.Fatal(err)
		}
	}
	res, err := a.Run("CREATE TABLE IF NOT EXISTS ks.u (k int PRIMARY KEY)")
	if err != nil || res[0].Change != nil {
		t.Fatalf("CREATE TABLE IF NOT EXISTS after the same table came first: %v, %v", res, err)
	}
}

// TestWriteLevelsAreCheckedFirst: a statement without conditions is
// refused its level before anything is read or built, after what
// preparing it refuses, as Cassandra orders them; a batch's level is not
// checked.
func TestWriteLevelsAreCheckedFirst(t *testing.T) {
	c := newMemCoordinator()
	s := NewSession(c)
	if _, err := s.Run("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};" +
		"CREATE TABLE ks.l (k int PRIMARY KEY, l list<int>); CREATE TABLE ks.c (k int PRIMARY KEY, n counter)"); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		stmt  string
		level request.Consistency
		want  string
	}{
		{"UPDATE ks.l SET l[0] = 1 WHERE k = 1", request.Serial, "You must use conditional updates for serializable writes"},
		{"DELETE l[0] FROM ks.l WHERE k = 1", request.LocalSerial, "You must use conditional updates for serializable writes"},
		{"INSERT INTO ks.l (k, l) VALUES (1, null)", request.Serial, "You must use conditional updates for serializable writes"},
		{"UPDATE ks.c SET n = n + null WHERE k = 1", request.Serial, "Counter operations are inherently non-serializable"},
		{"UPDATE ks.c SET n = n + null WHERE k = 1", request.Any, "Consistency level ANY is not yet supported for counter table c"},
		{"UPDATE ks.c USING TTL 5 SET n = n + 1 WHERE k = 1", request.Any, "Cannot provide custom TTL for counter updates"},
		{"INSERT INTO ks.c (k, n) VALUES (1, 1)", request.Serial, "INSERT statements are not allowed on counter tables, use UPDATE instead"},
	} {
		_, err := s.QueryText(step.stmt, QueryParams{Consistency: step.level})
		var e *Error
		if !errors.As(err, &e) || e.Code != Invalid || e.Message != step.want {
			t.Errorf("%s at %s: %v, want %q", step.stmt, step.level, err, step.want)
		}
	}
	if len(c.readLevels) != 0 {
		t.Fatalf("refused statements read at %v", c.readLevels)
	}
	if _, err := s.QueryText("BEGIN BATCH UPDATE ks.l SET l = l + [1] WHERE k = 1; APPLY BATCH", QueryParams{Consistency: request.Serial}); err != nil {
		t.Fatalf("a batch at SERIAL: %v", err)
	}
}
