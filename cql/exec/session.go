package exec

import (
	"fmt"
	"time"

	"github.com/sibyldb/sibyl/cql"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/schema"
)

// Coordinator is what statements run against.
type Coordinator interface {
	// Schema is the current schema.
	Schema() *schema.Schema
	// ApplySchema makes schema mutations durable and takes them into the
	// schema before it returns.
	ApplySchema(ms []*mutation.Mutation) error
}

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
type SchemaChange struct {
	Change   string // CREATED, UPDATED, DROPPED
	Target   string // KEYSPACE, TABLE, TYPE
	Keyspace string
	Name     string // the table or type; empty for a keyspace
}

// Result is what a statement returned.
type Result struct {
	Kind     ResultKind
	Keyspace string        // SetKeyspaceResult
	Change   *SchemaChange // SchemaChangeResult; nil when IF [NOT] EXISTS made it a no-op
}

// Session runs statements for one client connection.
type Session struct {
	c        Coordinator
	keyspace string
	// Now is the clock of writes' default timestamps; default time.Now.
	Now func() time.Time
}

// NewSession returns a session with no current keyspace.
func NewSession(c Coordinator) *Session { return &Session{c: c, Now: time.Now} }

// Keyspace is the session's current keyspace (USE), or "".
func (s *Session) Keyspace() string { return s.keyspace }

// Execute runs a parsed statement.
func (s *Session) Execute(st cql.Statement) (*Result, error) {
	switch st := st.(type) {
	case *cql.Use:
		if s.c.Schema().Keyspace(st.Keyspace) == nil {
			return nil, invalidf("Keyspace '%s' does not exist", st.Keyspace)
		}
		s.keyspace = st.Keyspace
		return &Result{Kind: SetKeyspaceResult, Keyspace: st.Keyspace}, nil
	case *cql.CreateKeyspace:
		return s.createKeyspace(st)
	case *cql.AlterKeyspace:
		return s.alterKeyspace(st)
	case *cql.DropKeyspace:
		return s.dropKeyspace(st)
	case *cql.CreateTable:
		return s.createTable(st)
	case *cql.DropTable:
		return s.dropTable(st)
	case *cql.CreateType:
		return s.createType(st)
	}
	return nil, invalidf("%T statements are not supported yet", st)
}

// writer is the cell writer of a schema change made now.
func (s *Session) writer() *schema.CellWriter {
	now := s.Now()
	return &schema.CellWriter{Timestamp: now.UnixMicro(), Now: now.Unix()}
}

// keyspaceOf resolves the keyspace of a possibly unqualified name.
func (s *Session) keyspaceOf(n cql.QualifiedName) (string, error) {
	if n.Keyspace != "" {
		return n.Keyspace, nil
	}
	if s.keyspace == "" {
		return "", invalidf("No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename")
	}
	return s.keyspace, nil
}

func (s *Session) userKeyspace(name string) (*schema.Keyspace, error) {
	if schema.IsSystemKeyspace(name) {
		return nil, unauthorizedf("%s keyspace is not user-modifiable.", name)
	}
	ks := s.c.Schema().Keyspace(name)
	if ks == nil {
		return nil, configf("Keyspace '%s' doesn't exist", name)
	}
	return ks, nil
}

func changed(change, target, keyspace, name string) *Result {
	return &Result{Kind: SchemaChangeResult, Change: &SchemaChange{Change: change, Target: target, Keyspace: keyspace, Name: name}}
}

func (s *Session) apply(ms ...*mutation.Mutation) error {
	if err := s.c.ApplySchema(ms); err != nil {
		return &Error{Code: ServerError, Message: fmt.Sprintf("schema change failed: %v", err)}
	}
	return nil
}
