package cql

// DescribeKind is what a DESCRIBE statement describes.
type DescribeKind uint8

// The forms of DESCRIBE (DESC), as Cassandra 4.1 accepts them.
const (
	DescribeCluster    DescribeKind = iota // DESCRIBE CLUSTER
	DescribeSchema                         // DESCRIBE [FULL] SCHEMA
	DescribeKeyspaces                      // DESCRIBE KEYSPACES
	DescribeKeyspace                       // DESCRIBE [ONLY] KEYSPACE [ks]
	DescribeTables                         // DESCRIBE TABLES
	DescribeTable                          // DESCRIBE TABLE [ks.]t (or COLUMNFAMILY)
	DescribeIndex                          // DESCRIBE INDEX [ks.]i
	DescribeView                           // DESCRIBE MATERIALIZED VIEW [ks.]v
	DescribeTypes                          // DESCRIBE TYPES
	DescribeType                           // DESCRIBE TYPE [ks.]t
	DescribeFunctions                      // DESCRIBE FUNCTIONS
	DescribeFunction                       // DESCRIBE FUNCTION [ks.]f
	DescribeAggregates                     // DESCRIBE AGGREGATES
	DescribeAggregate                      // DESCRIBE AGGREGATE [ks.]a
	DescribeElement                        // DESCRIBE [ks.]name: whatever has that name
)

var describeWords = [...]string{
	DescribeCluster: "CLUSTER", DescribeSchema: "SCHEMA", DescribeKeyspaces: "KEYSPACES",
	DescribeKeyspace: "KEYSPACE", DescribeTables: "TABLES", DescribeTable: "TABLE", DescribeIndex: "INDEX",
	DescribeView: "MATERIALIZED VIEW", DescribeTypes: "TYPES", DescribeType: "TYPE",
	DescribeFunctions: "FUNCTIONS", DescribeFunction: "FUNCTION", DescribeAggregates: "AGGREGATES",
	DescribeAggregate: "AGGREGATE", DescribeElement: "",
}

// Describe is a DESCRIBE statement. Name is the element described: for
// DescribeKeyspace, Name.Name is the keyspace ("" for the session's);
// for the others, [Name.Keyspace.]Name.Name.
type Describe struct {
	Kind          DescribeKind
	Name          QualifiedName
	Only          bool // DESCRIBE ONLY KEYSPACE: the keyspace without its contents
	Full          bool // DESCRIBE FULL SCHEMA: the system keyspaces too
	WithInternals bool
}

func (s *Describe) String() string {
	out := "DESCRIBE"
	switch {
	case s.Full:
		out += " FULL"
	case s.Only:
		out += " ONLY"
	}
	if w := describeWords[s.Kind]; w != "" {
		out += " " + w
	}
	switch s.Kind {
	case DescribeKeyspace:
		if s.Name.Name != "" {
			out += " " + quoteIdent(s.Name.Name)
		}
	case DescribeTable, DescribeIndex, DescribeView, DescribeType, DescribeFunction, DescribeAggregate, DescribeElement:
		out += " " + s.Name.String()
	}
	if s.WithInternals {
		out += " WITH INTERNALS"
	}
	return out
}

func (*Describe) statement() {}

// describeStatement parses DESCRIBE or DESC and what follows.
func (p *parser) describeStatement() Statement {
	p.next() // DESCRIBE or DESC
	s := &Describe{}
	named := func(kind DescribeKind) {
		s.Kind = kind
		s.Name = p.qualifiedName()
	}
	switch {
	case p.acceptKw("cluster"):
		s.Kind = DescribeCluster
	case p.acceptKw("full"):
		p.expectKw("schema")
		s.Kind, s.Full = DescribeSchema, true
	case p.acceptKw("schema"):
		s.Kind = DescribeSchema
	case p.acceptKw("keyspaces"):
		s.Kind = DescribeKeyspaces
	case p.acceptKw("only"):
		p.expectKw("keyspace")
		s.Kind, s.Only = DescribeKeyspace, true
		if isNameTok(p.peek()) && !p.isKw("with") {
			s.Name.Name = p.ident()
		}
	case p.acceptKw("keyspace"):
		s.Kind = DescribeKeyspace
		if isNameTok(p.peek()) && !p.isKw("with") {
			s.Name.Name = p.ident()
		}
	case p.acceptKw("tables"):
		s.Kind = DescribeTables
	case p.acceptKw("table"), p.acceptKw("columnfamily"):
		named(DescribeTable)
	case p.acceptKw("index"):
		named(DescribeIndex)
	case p.acceptKw("materialized"):
		p.expectKw("view")
		named(DescribeView)
	case p.acceptKw("types"):
		s.Kind = DescribeTypes
	case p.acceptKw("type"):
		named(DescribeType)
	case p.acceptKw("functions"):
		s.Kind = DescribeFunctions
	case p.acceptKw("function"):
		named(DescribeFunction)
	case p.acceptKw("aggregates"):
		s.Kind = DescribeAggregates
	case p.acceptKw("aggregate"):
		named(DescribeAggregate)
	default:
		named(DescribeElement)
	}
	if p.acceptKw("with") {
		p.expectKw("internals")
		s.WithInternals = true
	}
	return s
}
