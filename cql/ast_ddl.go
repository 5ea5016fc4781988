package cql

import "strings"

// CreateKeyspace is CREATE KEYSPACE [IF NOT EXISTS] name WITH options
// (replication = {...} AND durable_writes = bool, checked by cql/exec).
type CreateKeyspace struct {
	Name        string
	IfNotExists bool
	Options     []Option
}

func (s *CreateKeyspace) String() string {
	var b strings.Builder
	b.WriteString("CREATE KEYSPACE ")
	if s.IfNotExists {
		b.WriteString("IF NOT EXISTS ")
	}
	b.WriteString(quoteIdent(s.Name))
	b.WriteString(" WITH ")
	b.WriteString(joinOptions(s.Options))
	return b.String()
}

// AlterKeyspace is ALTER KEYSPACE [IF EXISTS] name WITH options.
type AlterKeyspace struct {
	Name     string
	IfExists bool
	Options  []Option
}

func (s *AlterKeyspace) String() string {
	var b strings.Builder
	b.WriteString("ALTER KEYSPACE ")
	if s.IfExists {
		b.WriteString("IF EXISTS ")
	}
	b.WriteString(quoteIdent(s.Name))
	b.WriteString(" WITH ")
	b.WriteString(joinOptions(s.Options))
	return b.String()
}

// DropKeyspace is DROP KEYSPACE [IF EXISTS] name.
type DropKeyspace struct {
	Name     string
	IfExists bool
}

func (s *DropKeyspace) String() string {
	return "DROP KEYSPACE " + ifExists(s.IfExists) + quoteIdent(s.Name)
}

// Use is USE keyspace.
type Use struct{ Keyspace string }

func (s *Use) String() string { return "USE " + quoteIdent(s.Keyspace) }

// ColumnDef declares a column in CREATE TABLE or ALTER TABLE ADD.
type ColumnDef struct {
	Name   string
	Type   *TypeRef
	Static bool
}

func (c ColumnDef) String() string {
	s := quoteIdent(c.Name) + " " + c.Type.String()
	if c.Static {
		s += " STATIC"
	}
	return s
}

// PrimaryKey lists the partition key columns and then the clustering
// columns, in key order. A column declared "c type PRIMARY KEY" is a
// partition key of one column and no clustering.
type PrimaryKey struct {
	PartitionKey []string
	Clustering   []string
}

func (k PrimaryKey) String() string {
	var b strings.Builder
	b.WriteString("PRIMARY KEY (")
	if len(k.PartitionKey) == 1 {
		b.WriteString(quoteIdent(k.PartitionKey[0]))
	} else {
		b.WriteString("(" + joinNames(k.PartitionKey) + ")")
	}
	for _, c := range k.Clustering {
		b.WriteString(", " + quoteIdent(c))
	}
	b.WriteByte(')')
	return b.String()
}

// ClusteringOrder is one entry of WITH CLUSTERING ORDER BY (...).
type ClusteringOrder struct {
	Column     string
	Descending bool
}

func (o ClusteringOrder) String() string {
	if o.Descending {
		return quoteIdent(o.Column) + " DESC"
	}
	return quoteIdent(o.Column) + " ASC"
}

// CreateTable is CREATE TABLE [IF NOT EXISTS] name (columns, PRIMARY KEY
// (...)) [WITH CLUSTERING ORDER BY (...) AND options]. PrimaryKey has no
// partition key columns when the statement named none, which cql/exec
// rejects with the other checks that need the column list (unknown or
// repeated columns, key columns that are static, and so on).
type CreateTable struct {
	Name            QualifiedName
	IfNotExists     bool
	Columns         []ColumnDef
	PrimaryKey      PrimaryKey
	ClusteringOrder []ClusteringOrder
	Options         []Option
}

func (s *CreateTable) String() string {
	var b strings.Builder
	b.WriteString("CREATE TABLE ")
	if s.IfNotExists {
		b.WriteString("IF NOT EXISTS ")
	}
	b.WriteString(s.Name.String())
	b.WriteString(" (")
	for i, c := range s.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.String())
	}
	if len(s.PrimaryKey.PartitionKey) > 0 {
		if len(s.Columns) > 0 {
			b.WriteString(", ")
		}
		b.WriteString(s.PrimaryKey.String())
	}
	b.WriteByte(')')
	sep := " WITH "
	if len(s.ClusteringOrder) > 0 {
		b.WriteString(sep + "CLUSTERING ORDER BY (")
		for i, o := range s.ClusteringOrder {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(o.String())
		}
		b.WriteByte(')')
		sep = " AND "
	}
	if len(s.Options) > 0 {
		b.WriteString(sep + joinOptions(s.Options))
	}
	return b.String()
}

// AlterTableAction says what an ALTER TABLE does.
type AlterTableAction uint8

// The ALTER TABLE actions.
const (
	AddColumns    AlterTableAction = iota // ADD c type [STATIC] | ADD (c type, ...)
	DropColumns                           // DROP c | DROP (c, ...)
	RenameColumns                         // RENAME a TO b [AND c TO d]
	SetOptions                            // WITH options
)

// ColumnRename is one "from TO to" of ALTER TABLE RENAME.
type ColumnRename struct{ From, To string }

func (r ColumnRename) String() string { return quoteIdent(r.From) + " TO " + quoteIdent(r.To) }

func joinRenames(rs []ColumnRename) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.String()
	}
	return strings.Join(parts, " AND ")
}

// AlterTable is ALTER TABLE [IF EXISTS] name followed by one action; the
// field for that action is set (Add, Drop, Rename or Options).
// IfColumnNotExists is ADD IF NOT EXISTS; IfColumnExists is DROP IF EXISTS
// or RENAME IF EXISTS.
type AlterTable struct {
	Name              QualifiedName
	IfExists          bool
	Action            AlterTableAction
	IfColumnExists    bool
	IfColumnNotExists bool
	Add               []ColumnDef
	Drop              []string
	Rename            []ColumnRename
	Options           []Option
}

func (s *AlterTable) String() string {
	var b strings.Builder
	b.WriteString("ALTER TABLE " + ifExists(s.IfExists) + s.Name.String())
	switch s.Action {
	case AddColumns:
		b.WriteString(" ADD ")
		if s.IfColumnNotExists {
			b.WriteString("IF NOT EXISTS ")
		}
		if len(s.Add) == 1 {
			b.WriteString(s.Add[0].String())
			break
		}
		b.WriteByte('(')
		for i, c := range s.Add {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(c.String())
		}
		b.WriteByte(')')
	case DropColumns:
		b.WriteString(" DROP " + ifExists(s.IfColumnExists))
		if len(s.Drop) == 1 {
			b.WriteString(quoteIdent(s.Drop[0]))
		} else {
			b.WriteString("(" + joinNames(s.Drop) + ")")
		}
	case RenameColumns:
		b.WriteString(" RENAME " + ifExists(s.IfColumnExists) + joinRenames(s.Rename))
	case SetOptions:
		b.WriteString(" WITH " + joinOptions(s.Options))
	}
	return b.String()
}

// DropTable is DROP TABLE [IF EXISTS] name.
type DropTable struct {
	Name     QualifiedName
	IfExists bool
}

func (s *DropTable) String() string { return "DROP TABLE " + ifExists(s.IfExists) + s.Name.String() }

// Truncate is TRUNCATE [TABLE] name.
type Truncate struct{ Table QualifiedName }

func (s *Truncate) String() string { return "TRUNCATE TABLE " + s.Table.String() }

// FieldDef declares a field of a user type.
type FieldDef struct {
	Name string
	Type *TypeRef
}

func (f FieldDef) String() string { return quoteIdent(f.Name) + " " + f.Type.String() }

// CreateType is CREATE TYPE [IF NOT EXISTS] name (field type, ...).
type CreateType struct {
	Name        QualifiedName
	IfNotExists bool
	Fields      []FieldDef
}

func (s *CreateType) String() string {
	var b strings.Builder
	b.WriteString("CREATE TYPE ")
	if s.IfNotExists {
		b.WriteString("IF NOT EXISTS ")
	}
	b.WriteString(typeName(s.Name) + " (")
	for i, f := range s.Fields {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(f.String())
	}
	b.WriteByte(')')
	return b.String()
}

// DropType is DROP TYPE [IF EXISTS] name.
type DropType struct {
	Name     QualifiedName
	IfExists bool
}

func (s *DropType) String() string { return "DROP TYPE " + ifExists(s.IfExists) + typeName(s.Name) }

// IndexTargetKind is what part of a column an index reads.
type IndexTargetKind uint8

// The index targets, as Cassandra's IndexTarget.Type.
const (
	IndexSimple  IndexTargetKind = iota // c: the value (a collection's values, once prepared)
	IndexValues                         // values(c)
	IndexKeys                           // keys(c)
	IndexEntries                        // entries(c)
	IndexFull                           // full(c): a frozen collection whole
)

var indexTargetWords = [...]string{"", "values", "keys", "entries", "full"}

// String is the word Cassandra writes around the column, "" for simple.
func (k IndexTargetKind) String() string { return indexTargetWords[k] }

// IndexTarget is one column of CREATE INDEX, with its modifier.
type IndexTarget struct {
	Column string
	Kind   IndexTargetKind
}

func (t IndexTarget) String() string {
	if t.Kind == IndexSimple {
		return quoteIdent(t.Column)
	}
	return t.Kind.String() + "(" + quoteIdent(t.Column) + ")"
}

// CreateIndex is CREATE [CUSTOM] INDEX [IF NOT EXISTS] [name] ON table
// (targets) [USING 'class'] [WITH options]. Name.Name is "" when the
// statement gives none.
type CreateIndex struct {
	Name        QualifiedName
	Table       QualifiedName
	IfNotExists bool
	Custom      bool
	Targets     []IndexTarget
	Using       string // the class; "" when not given
	HasUsing    bool
	Options     []Option
}

func (s *CreateIndex) String() string {
	var b strings.Builder
	b.WriteString("CREATE ")
	if s.Custom {
		b.WriteString("CUSTOM ")
	}
	b.WriteString("INDEX ")
	if s.IfNotExists {
		b.WriteString("IF NOT EXISTS ")
	}
	if s.Name.Name != "" {
		b.WriteString(s.Name.String() + " ")
	}
	b.WriteString("ON " + s.Table.String() + " (")
	for i, t := range s.Targets {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(t.String())
	}
	b.WriteByte(')')
	if s.HasUsing {
		b.WriteString(" USING " + quoteString(s.Using))
	}
	if len(s.Options) > 0 {
		b.WriteString(" WITH " + joinOptions(s.Options))
	}
	return b.String()
}

// DropIndex is DROP INDEX [IF EXISTS] [keyspace.]name.
type DropIndex struct {
	Name     QualifiedName
	IfExists bool
}

func (s *DropIndex) String() string { return "DROP INDEX " + ifExists(s.IfExists) + s.Name.String() }

// AlterTypeAction says what an ALTER TYPE does.
type AlterTypeAction uint8

// The ALTER TYPE actions.
const (
	AddField       AlterTypeAction = iota // ADD [IF NOT EXISTS] f type
	RenameFields                          // RENAME [IF EXISTS] a TO b [AND c TO d]
	AlterFieldType                        // ALTER f TYPE type, which Cassandra refuses
)

// AlterType is ALTER TYPE [IF EXISTS] name followed by one action: Add for
// ADD and ALTER, Rename for RENAME. IfFieldNotExists is ADD IF NOT EXISTS;
// IfFieldExists is RENAME IF EXISTS.
type AlterType struct {
	Name             QualifiedName
	IfExists         bool
	Action           AlterTypeAction
	IfFieldExists    bool
	IfFieldNotExists bool
	Add              FieldDef
	Rename           []ColumnRename
}

func (s *AlterType) String() string {
	var b strings.Builder
	b.WriteString("ALTER TYPE " + ifExists(s.IfExists) + typeName(s.Name))
	switch s.Action {
	case AddField:
		b.WriteString(" ADD ")
		if s.IfFieldNotExists {
			b.WriteString("IF NOT EXISTS ")
		}
		b.WriteString(s.Add.String())
	case AlterFieldType:
		b.WriteString(" ALTER " + quoteIdent(s.Add.Name) + " TYPE " + s.Add.Type.String())
	case RenameFields:
		b.WriteString(" RENAME " + ifExists(s.IfFieldExists) + joinRenames(s.Rename))
	}
	return b.String()
}

func typeName(n QualifiedName) string {
	if n.Keyspace == "" {
		return quoteTypeName(n.Name)
	}
	return quoteIdent(n.Keyspace) + "." + quoteTypeName(n.Name)
}

func ifExists(b bool) string {
	if b {
		return "IF EXISTS "
	}
	return ""
}

func (*CreateKeyspace) statement() {}
func (*AlterKeyspace) statement()  {}
func (*DropKeyspace) statement()   {}
func (*Use) statement()            {}
func (*CreateTable) statement()    {}
func (*AlterTable) statement()     {}
func (*DropTable) statement()      {}
func (*Truncate) statement()       {}
func (*CreateType) statement()     {}
func (*DropType) statement()       {}
func (*AlterType) statement()      {}
func (*CreateIndex) statement()    {}
func (*DropIndex) statement()      {}
