package exec

import (
	"errors"
	"fmt"
	"time"

	"github.com/sibyldb/sibyl/auth"
	"github.com/sibyldb/sibyl/cql"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/schema"
	"github.com/sibyldb/sibyl/tracing"
)

// Coordinator is what statements run against: one node's engine, or the
// cluster's coordinator. It speaks the request package's types, which
// every layer below shares, and reports the failures of replicas as
// request's failure types (errors.As finds them).
type Coordinator interface {
	// Schema is the current schema.
	Schema() *schema.Schema
	// ApplySchema makes schema mutations, made against the schema base
	// (one Schema returned), durable and takes them into the schema
	// before it returns. When another change has come in since base, it
	// may refuse with ErrSchemaChanged: the statement is then checked
	// again against the schema as it is.
	ApplySchema(base *schema.Schema, ms []*mutation.Mutation) error
	// Apply makes mutations of tables durable and visible, on as many
	// replicas as the consistency level asks. A traced statement's writes
	// record what they do in tr (nil: untraced), as do its reads in their
	// request's Trace.
	Apply(ms []*mutation.Mutation, cl request.Consistency, tr *tracing.Trace) error
	// ApplyLogged is Apply for a logged batch: written whole in the end,
	// even if the coordinator dies half way (through the batchlog when it
	// writes several partitions).
	ApplyLogged(ms []*mutation.Mutation, cl request.Consistency, tr *tracing.Trace) error
	// ApplyCounters applies writes of counter tables: counter update cells
	// (mutation.CounterUpdate) added to the counters, deletions as any
	// write's.
	ApplyCounters(ms []*mutation.Mutation, cl request.Consistency, tr *tracing.Trace) error
	// ReadPartition reads a slice of one partition; nil when nothing live
	// was found.
	ReadPartition(t *schema.Table, r request.PartitionRead) (*request.Partition, error)
	// Scan reads a table's partitions in token order.
	Scan(t *schema.Table, r request.RangeRead) ([]*request.Partition, error)
	// Truncate removes every row of a table.
	Truncate(t *schema.Table) error
	// CAS runs a conditional write of one partition (a lightweight
	// transaction): it returns whether the write applied and, when it did
	// not, the partition as the conditions saw it (nil when empty).
	CAS(t *schema.Table, op request.CAS) (*request.Partition, bool, error)
}

// ErrSchemaChanged is what a Coordinator's ApplySchema returns when
// another schema change committed after the one the statement was checked
// against.
var ErrSchemaChanged = errors.New("exec: another schema change came first")

// schemaAttempts bounds how many times a DDL statement is checked again
// because other changes keep coming first.
const schemaAttempts = 10

// ResultKind says what a statement returned.
type ResultKind uint8

// The result kinds, as the native protocol names them.
const (
	VoidResult ResultKind = iota
	RowsResult
	SetKeyspaceResult
	SchemaChangeResult
)

// SchemaChange describes what a DDL statement changed.
type SchemaChange = schema.Change

// Result is what a statement returned. Results are read-only: a session
// may hand the same one to several calls.
type Result struct {
	Kind     ResultKind
	Keyspace string        // SetKeyspaceResult
	Change   *SchemaChange // SchemaChangeResult; nil when IF [NOT] EXISTS made it a no-op
	Columns  []ColumnSpec  // RowsResult
	Rows     [][][]byte    // RowsResult: one serialized value (nil: null) per column
	// PagingState, when set, resumes the query after this page's last row
	// (QueryParams.PagingState): more rows remain.
	PagingState []byte
	// Warnings are what the client is told alongside the result, as
	// Cassandra warns of an aggregation over many partitions.
	Warnings []string
}

// ColumnSpec describes a result column.
type ColumnSpec struct {
	Keyspace, Table, Name string
	Type                  *cqltype.Type
}

// Session runs statements for one client connection.
type Session struct {
	c     Coordinator
	plans map[cql.Statement]*plan
	// consistency is the running statement's consistency level.
	consistency request.Consistency
	scratch     schema.RowValues
	point       pointScratch
	keyspace    string
	// base is the schema a DDL statement is checked against, the same for
	// the whole statement; nil outside DDL.
	base *schema.Schema
	// current, during a conditional write, is the partition its Paxos
	// round read: list operations read their lists there.
	current *prefetched
	// serial is the running statement's serial consistency (nil: SERIAL).
	serial *request.Consistency
	// Now is the clock of writes' default timestamps; default time.Now.
	Now func() time.Time
	// auth checks the statements (nil: everything is allowed); user is
	// the role they run as ("" before a login, or anonymous).
	auth *auth.Service
	user string
	// trace records what the running statement does (nil: untraced).
	trace *tracing.Trace
}

// NewSession returns a session with no current keyspace.
func NewSession(c Coordinator) *Session { return &Session{c: c, Now: time.Now} }

// SetTrace makes the statements run from now on record what they do in
// tr (nil: untraced).
func (s *Session) SetTrace(tr *tracing.Trace) { s.trace = tr }

// Trace is where the running statement records what it does (nil:
// untraced).
func (s *Session) Trace() *tracing.Trace { return s.trace }

// SetKeyspace makes ks the session's keyspace without checking it: the
// sessions of one client connection share the keyspace its USE set.
func (s *Session) SetKeyspace(ks string) { s.keyspace = ks }

// Keyspace is the session's current keyspace (USE), or "".
func (s *Session) Keyspace() string { return s.keyspace }

// Run parses text (one statement or several, separated by semicolons) and
// executes each in turn, stopping at the first error; bound values go to
// every statement.
func (s *Session) Run(text string, bound ...[]byte) ([]*Result, error) {
	stmts, err := cql.ParseAll(text)
	if err != nil {
		return nil, syntaxError(err)
	}
	out := make([]*Result, 0, len(stmts))
	for _, st := range stmts {
		r, err := s.Execute(st, bound...)
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

// syntaxError gives a parse error its CQL code.
func syntaxError(err error) error {
	var se *cql.SyntaxError
	if errors.As(err, &se) {
		return &Error{Code: SyntaxError, Message: se.Error()}
	}
	return err
}

// QueryText parses one statement and runs it with opts (the native
// protocol's QUERY: text, values and paging together).
func (s *Session) QueryText(text string, opts QueryParams) (*Result, error) {
	st, err := cql.Parse(text)
	if err != nil {
		return nil, syntaxError(err)
	}
	return s.Query(st, opts)
}

// Execute runs a parsed statement with its bound values (one per bind
// marker, by Index; nil for null).
func (s *Session) Execute(st cql.Statement, bound ...[]byte) (*Result, error) {
	return s.Query(st, QueryParams{Values: bound})
}

// Query runs a parsed statement with its options (bound values, paging).
func (s *Session) Query(st cql.Statement, opts QueryParams) (*Result, error) {
	s.consistency, s.serial = opts.Consistency, opts.SerialConsistency
	return s.run(st, opts, bindValues(opts))
}

func (s *Session) run(st cql.Statement, opts QueryParams, bound *binding) (*Result, error) {
	if s.base == nil {
		// One schema for the check and the statement: a table made
		// between them must not run unchecked. (A DDL statement reads
		// the schema again at each attempt; its checks do not depend on
		// what exists.)
		s.base = s.c.Schema()
		defer func() { s.base = nil }()
	}
	if err := s.authorize(st, s.keyspace); err != nil {
		return nil, err
	}
	switch st := st.(type) {
	case *cql.Use:
		if s.schema().Keyspace(st.Keyspace) == nil {
			return nil, invalidf("Keyspace '%s' does not exist", st.Keyspace)
		}
		s.keyspace = st.Keyspace
		return &Result{Kind: SetKeyspaceResult, Keyspace: st.Keyspace}, nil
	case *cql.CreateKeyspace:
		return s.schemaChange(func() (*Result, error) { return s.createKeyspace(st) })
	case *cql.AlterKeyspace:
		return s.schemaChange(func() (*Result, error) { return s.alterKeyspace(st) })
	case *cql.DropKeyspace:
		return s.schemaChange(func() (*Result, error) { return s.dropKeyspace(st) })
	case *cql.CreateTable:
		return s.schemaChange(func() (*Result, error) { return s.createTable(st) })
	case *cql.DropTable:
		return s.schemaChange(func() (*Result, error) { return s.dropTable(st) })
	case *cql.CreateType:
		return s.schemaChange(func() (*Result, error) { return s.createType(st) })
	case *cql.AlterTable:
		return s.schemaChange(func() (*Result, error) { return s.alterTable(st) })
	case *cql.CreateFunction:
		return s.createFunction(st)
	case *cql.CreateAggregate:
		return s.createAggregate(st)
	case *cql.DropFunction:
		return s.dropFunction(st)
	case *cql.CreateView:
		return s.createView(st)
	case *cql.DropView:
		return s.missingView(st.Name, st.IfExists)
	case *cql.AlterView:
		return s.missingView(st.Name, st.IfExists)
	case *cql.CreateIndex:
		return s.schemaChange(func() (*Result, error) { return s.createIndex(st) })
	case *cql.DropIndex:
		return s.schemaChange(func() (*Result, error) { return s.dropIndex(st) })
	case *cql.AlterType:
		return s.schemaChange(func() (*Result, error) { return s.alterType(st) })
	case *cql.DropType:
		return s.schemaChange(func() (*Result, error) { return s.dropType(st) })
	case *cql.Truncate:
		return s.truncate(st)
	case *cql.Insert:
		return s.insert(st, bound)
	case *cql.Update:
		return s.update(st, bound)
	case *cql.Delete:
		return s.deleteRows(st, bound)
	case *cql.Batch:
		return s.batch(st, bound)
	case *cql.Select:
		return s.selectRows(st, opts, bound)
	case *cql.Describe:
		return s.describe(st)
	case *cql.CreateRole:
		return s.schemaChange(func() (*Result, error) { return s.createRole(st) })
	case *cql.AlterRole:
		return s.schemaChange(func() (*Result, error) { return s.alterRole(st) })
	case *cql.DropRole:
		return s.schemaChange(func() (*Result, error) { return s.dropRole(st) })
	case *cql.RoleGrant:
		return s.schemaChange(func() (*Result, error) { return s.roleGrant(st) })
	case *cql.PermissionGrant:
		return s.schemaChange(func() (*Result, error) { return s.permissionGrant(st) })
	case *cql.ListRoles:
		return s.listRoles(st)
	case *cql.ListPermissions:
		return s.listPermissions(st)
	}
	return nil, invalidf("%T statements are not supported yet", st)
}

// schemaChange runs a DDL statement against one schema, and again against
// the schema that is then if another change committed first: of two
// conflicting statements one wins, and the other meets what the winner
// made (AlreadyExists, or an Invalid), as if they had run one after the
// other.
func (s *Session) schemaChange(run func() (*Result, error)) (*Result, error) {
	defer func() { s.base = nil }()
	for attempt := 1; ; attempt++ {
		s.base = s.c.Schema()
		res, err := run()
		if !errors.Is(err, ErrSchemaChanged) {
			return res, err
		}
		if attempt == schemaAttempts {
			return nil, &Error{Code: ServerError, Message: fmt.Sprintf("schema change failed: other schema changes kept committing first (%d attempts)", attempt)}
		}
	}
}

// schema is the schema the running statement sees: the one a DDL
// statement is checked against, else the current one.
func (s *Session) schema() *schema.Schema {
	if s.base != nil {
		return s.base
	}
	return s.c.Schema()
}

// writer is the cell writer of a schema change made now.
func (s *Session) writer() *schema.CellWriter {
	now := s.Now()
	return &schema.CellWriter{Timestamp: now.UnixMicro(), Now: now.Unix()}
}

// keyspaceOf resolves the keyspace of a possibly unqualified name.
func (s *Session) keyspaceOf(n cql.QualifiedName) (string, error) {
	if ks := nameKeyspace(n, s.keyspace); ks != "" {
		return ks, nil
	}
	return "", invalidf("No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename")
}

func (s *Session) userKeyspace(name string) (*schema.Keyspace, error) {
	if schema.IsSystemKeyspace(name) {
		return nil, unauthorizedf("%s keyspace is not user-modifiable.", name)
	}
	ks := s.schema().Keyspace(name)
	if ks == nil {
		return nil, invalidf("Keyspace '%s' doesn't exist", name)
	}
	return ks, nil
}

func changed(change, target, keyspace, name string) *Result {
	return &Result{Kind: SchemaChangeResult, Change: &SchemaChange{Change: change, Target: target, Keyspace: keyspace, Name: name}}
}

func (s *Session) apply(ms ...*mutation.Mutation) error {
	if err := s.c.ApplySchema(s.schema(), ms); err != nil {
		if errors.Is(err, ErrSchemaChanged) {
			return err
		}
		return &Error{Code: ServerError, Message: fmt.Sprintf("schema change failed: %v", err)}
	}
	return nil
}
