package exec

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/sibyldb/sibyl/cql"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/schema"
)

// DESCRIBE, as Cassandra 4.1 runs it on the server (cqlsh 6 sends the
// statement and prints what comes back): listings are rows of
// (keyspace_name, type, name); elements add create_statement, the CQL
// that recreates them, in Cassandra's layout.

// ClusterInfo is what DESCRIBE CLUSTER reports; a Coordinator that knows
// it implements ClusterDescriber.
type ClusterInfo struct {
	Name        string
	Partitioner string // the class name
	Snitch      string
	// Ownership maps each token range's end token to its replicas'
	// addresses ("/127.0.0.1:7000"), for keyspace.
	Ownership func(keyspace string) map[string][]string
	// DataCenters are the cluster's data centres: this node's and those
	// of every node in its ring.
	DataCenters []string
}

// ClusterDescriber is implemented by coordinators that can describe their
// cluster.
type ClusterDescriber interface {
	ClusterInfo() ClusterInfo
}

var (
	listingColumns = describeColumns("keyspace_name", "type", "name")
	elementColumns = describeColumns("keyspace_name", "type", "name", "create_statement")
)

func describeColumns(names ...string) []ColumnSpec {
	out := make([]ColumnSpec, len(names))
	for i, n := range names {
		out[i] = ColumnSpec{Keyspace: "system", Table: "describe", Name: n, Type: cqltype.TextType}
	}
	return out
}

// describedElement is one row of a DESCRIBE result.
type describedElement struct {
	keyspace, kind, name, create string
}

func (s *Session) describe(st *cql.Describe) (*Result, error) {
	sch := s.schema()
	var rows []describedElement
	listing := false
	switch st.Kind {
	case cql.DescribeCluster:
		return s.describeCluster()
	case cql.DescribeKeyspaces:
		listing = true
		for _, ks := range describedKeyspaces(sch) {
			rows = append(rows, describedElement{ks.Name, "keyspace", ks.Name, ""})
		}
	case cql.DescribeTables, cql.DescribeTypes, cql.DescribeFunctions, cql.DescribeAggregates:
		listing = true
		keyspaces := describedKeyspaces(sch)
		if s.keyspace != "" {
			ks := sch.Keyspace(s.keyspace)
			if ks == nil {
				return nil, invalidf("'%s' not found in keyspaces", s.keyspace)
			}
			keyspaces = []*schema.Keyspace{ks}
		}
		for _, ks := range keyspaces {
			switch st.Kind {
			case cql.DescribeTables:
				for _, t := range sortedTables(ks) {
					rows = append(rows, describedElement{ks.Name, "table", t.Name, ""})
				}
			case cql.DescribeTypes:
				for _, t := range sortedNames(maps.Keys(ks.Types)) {
					rows = append(rows, describedElement{ks.Name, "type", t, ""})
				}
			}
		}
	case cql.DescribeSchema:
		for _, ks := range describedKeyspaces(sch) {
			if st.Full || !schema.IsSystemKeyspace(ks.Name) {
				rows = append(rows, describeKeyspace(ks, false, st.WithInternals)...)
			}
		}
	case cql.DescribeKeyspace:
		ks, err := s.describedKeyspace(sch, st.Name.Name)
		if err != nil {
			return nil, err
		}
		rows = describeKeyspace(ks, st.Only, st.WithInternals)
	case cql.DescribeTable, cql.DescribeType, cql.DescribeIndex, cql.DescribeView, cql.DescribeFunction, cql.DescribeAggregate:
		ks, err := s.describedKeyspace(sch, st.Name.Keyspace)
		if err != nil {
			return nil, err
		}
		name := st.Name.Name
		switch st.Kind {
		case cql.DescribeTable:
			t := ks.Tables[name]
			if t == nil {
				return nil, invalidf("Table '%s' not found in keyspace '%s'", name, ks.Name)
			}
			rows = append(rows, tableElements(t, st.WithInternals)...)
		case cql.DescribeType:
			t := ks.Types[name]
			if t == nil {
				return nil, invalidf("User defined type '%s' not found in '%s'", name, ks.Name)
			}
			rows = append(rows, describedElement{ks.Name, "type", name, typeStatement(ks.Name, t)})
		case cql.DescribeIndex:
			t, ix := ks.FindIndex(name)
			if t == nil {
				return nil, invalidf("Table for existing index '%s' not found in '%s'", name, ks.Name)
			}
			rows = append(rows, indexElement(t, ix))
		case cql.DescribeView:
			return nil, invalidf("Materialized view '%s' not found in '%s'", name, ks.Name)
		case cql.DescribeFunction:
			return nil, invalidf("User defined function '%s' not found in '%s'", name, ks.Name)
		case cql.DescribeAggregate:
			return nil, invalidf("User defined aggregate '%s' not found in '%s'", name, ks.Name)
		}
	case cql.DescribeElement:
		ksName, name := st.Name.Keyspace, st.Name.Name
		if ksName == "" {
			if ks := sch.Keyspace(name); ks != nil {
				rows = describeKeyspace(ks, false, st.WithInternals)
				break
			}
			ksName = s.keyspace
			if ksName == "" {
				ksName = name
			}
		}
		ks := sch.Keyspace(ksName)
		if ks == nil {
			return nil, invalidf("'%s' not found in keyspaces", ksName)
		}
		if t := ks.Tables[name]; t != nil {
			rows = append(rows, tableElements(t, st.WithInternals)...)
			break
		}
		if t, ix := ks.FindIndex(name); t != nil {
			rows = append(rows, indexElement(t, ix))
			break
		}
		return nil, invalidf("'%s' not found in keyspace '%s'", name, ks.Name)
	default:
		return nil, invalidf("%s is not supported yet", st)
	}
	res := &Result{Kind: RowsResult, Columns: elementColumns}
	if listing {
		res.Columns = listingColumns
	}
	for _, r := range rows {
		row := [][]byte{[]byte(describedName(r.keyspace)), []byte(r.kind), []byte(describedName(r.name))}
		if !listing {
			row = append(row, []byte(r.create))
		}
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}

// describedKeyspace resolves the keyspace a DESCRIBE names, or the
// session's.
func (s *Session) describedKeyspace(sch *schema.Schema, name string) (*schema.Keyspace, error) {
	if name == "" {
		name = s.keyspace
	}
	if name == "" {
		return nil, invalidf("No keyspace specified and no current keyspace")
	}
	ks := sch.Keyspace(name)
	if ks == nil {
		return nil, invalidf("'%s' not found in keyspaces", name)
	}
	return ks, nil
}

func (s *Session) describeCluster() (*Result, error) {
	d, ok := s.c.(ClusterDescriber)
	if !ok {
		return nil, invalidf("DESCRIBE CLUSTER is not supported by this coordinator")
	}
	info := d.ClusterInfo()
	res := &Result{Kind: RowsResult, Columns: describeColumns("cluster", "partitioner", "snitch")}
	row := [][]byte{[]byte(info.Name), []byte(strings.TrimPrefix(info.Partitioner, "org.apache.cassandra.dht.")), []byte(info.Snitch)}
	// The ownership column is there only for a user keyspace in use:
	// cqlsh tests for the column, not for a null.
	if s.keyspace != "" && !schema.IsSystemKeyspace(s.keyspace) && info.Ownership != nil {
		listType := cqltype.ListOf(cqltype.TextType, false)
		res.Columns = append(res.Columns, ColumnSpec{Keyspace: "system", Table: "describe", Name: "range_ownership",
			Type: cqltype.MapOf(cqltype.TextType, listType, false)})
		own := info.Ownership(s.keyspace)
		keys := slices.Sorted(maps.Keys(own))
		var ks, vs [][]byte
		for _, k := range keys {
			var eps [][]byte
			for _, e := range own[k] {
				eps = append(eps, []byte(e))
			}
			ks, vs = append(ks, []byte(k)), append(vs, cqltype.EncodeCollection(eps))
		}
		row = append(row, cqltype.EncodeMap(ks, vs))
	}
	res.Rows = [][][]byte{row}
	return res, nil
}

// describedKeyspaces are the keyspaces in DESCRIBE's order: by name,
// ignoring case.
func describedKeyspaces(sch *schema.Schema) []*schema.Keyspace {
	out := append(slices.Clone(sch.Keyspaces()), schema.VirtualKeyspaces()...)
	slices.SortStableFunc(out, func(a, b *schema.Keyspace) int { return compareIgnoringCase(a.Name, b.Name) })
	return out
}

func sortedTables(ks *schema.Keyspace) []*schema.Table {
	out := slices.Collect(maps.Values(ks.Tables))
	slices.SortStableFunc(out, func(a, b *schema.Table) int { return compareIgnoringCase(a.Name, b.Name) })
	return out
}

func sortedNames(names func(func(string) bool)) []string {
	out := slices.Collect(names)
	slices.SortStableFunc(out, compareIgnoringCase)
	return out
}

func compareIgnoringCase(a, b string) int {
	if c := cmp.Compare(strings.ToLower(a), strings.ToLower(b)); c != 0 {
		return c
	}
	return cmp.Compare(a, b)
}

// describeKeyspace is DESCRIBE KEYSPACE: the keyspace, then (unless only)
// its types, each after the types it uses, then its tables.
func describeKeyspace(ks *schema.Keyspace, only, internals bool) []describedElement {
	rows := []describedElement{{ks.Name, "keyspace", ks.Name, keyspaceStatement(ks)}}
	if only {
		return rows
	}
	done := map[string]bool{}
	var visit func(name string)
	visit = func(name string) {
		t := ks.Types[name]
		if t == nil || done[name] {
			return
		}
		done[name] = true
		for _, f := range t.Params {
			for _, used := range usedTypes(f) {
				visit(used)
			}
		}
		rows = append(rows, describedElement{ks.Name, "type", name, typeStatement(ks.Name, t)})
	}
	for _, name := range slices.Sorted(maps.Keys(ks.Types)) {
		visit(name)
	}
	for _, t := range sortedTables(ks) {
		rows = append(rows, tableElements(t, internals)...)
	}
	return rows
}

// tableElements are a table and its indexes, by name ignoring case, as
// Cassandra describes a table.
func tableElements(t *schema.Table, internals bool) []describedElement {
	rows := []describedElement{{t.Keyspace, "table", t.Name, tableStatement(t, internals)}}
	indexes := slices.Clone(t.Indexes)
	slices.SortStableFunc(indexes, func(a, b *schema.Index) int { return compareIgnoringCase(a.Name, b.Name) })
	for _, ix := range indexes {
		rows = append(rows, indexElement(t, ix))
	}
	return rows
}

// indexElement is an index's CREATE statement as Cassandra's
// IndexMetadata writes it.
func indexElement(t *schema.Table, ix *schema.Index) describedElement {
	var b strings.Builder
	on := cqltype.QuoteIdent(t.Keyspace) + "." + cqltype.QuoteIdent(t.Name)
	if ix.Kind == schema.IndexCustom {
		b.WriteString("CREATE CUSTOM INDEX " + cqltype.QuoteIdent(ix.Name) + " ON " + on + " (" + ix.Options[schema.IndexTargetOption] + ") USING " + quoted(ix.Options[schema.IndexClassOption]))
		var rest []string
		for _, k := range slices.Sorted(maps.Keys(ix.Options)) {
			if k != schema.IndexTargetOption && k != schema.IndexClassOption {
				rest = append(rest, quoted(k)+": "+quoted(ix.Options[k]))
			}
		}
		if len(rest) > 0 {
			b.WriteString(" WITH OPTIONS = {" + strings.Join(rest, ", ") + "}")
		}
	} else {
		b.WriteString("CREATE INDEX " + cqltype.QuoteIdent(ix.Name) + " ON " + on + " (" + ix.Options[schema.IndexTargetOption] + ")")
	}
	b.WriteByte(';')
	return describedElement{t.Keyspace, "index", ix.Name, b.String()}
}

// usedTypes are the user types a type refers to, directly or inside
// collections and tuples.
func usedTypes(t *cqltype.Type) []string {
	if t.Kind == cqltype.UDT {
		return []string{t.Name}
	}
	var out []string
	for _, p := range t.Params {
		out = append(out, usedTypes(p)...)
	}
	return out
}

// describeReserved are the words DESCRIBE quotes when they name something
// (Cassandra's reserved keywords: its rule is not the parser's, which has
// a few more).
var describeReserved = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`add allow alter and apply asc authorize batch begin by columnfamily create delete
		desc describe drop entries execute from full grant if in index infinity insert into is keyspace limit
		materialized modify nan norecursive not null of on or order primary rename revoke schema select set table
		to token truncate unlogged update use using view where with`) {
		describeReserved[w] = true
	}
}

// describedName quotes a name as DESCRIBE prints it: unquoted only when
// it is lower case letters, digits and _ starting with a letter, and not
// reserved.
func describedName(name string) string {
	plain := name != "" && name[0] >= 'a' && name[0] <= 'z'
	for i := 0; plain && i < len(name); i++ {
		c := name[i]
		plain = c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_'
	}
	if plain && !describeReserved[name] {
		return name
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

func quoted(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func keyspaceStatement(ks *schema.Keyspace) string {
	if schema.IsVirtualKeyspace(ks.Name) {
		name := describedName(ks.Name)
		return "/*\nWarning: Keyspace " + name + " is a virtual keyspace and cannot be recreated with CQL.\n" +
			"Structure, for reference:\nVIRTUAL KEYSPACE " + name + ";\n*/"
	}
	var b strings.Builder
	repl := ks.Replication.Map()
	fmt.Fprintf(&b, "CREATE KEYSPACE %s WITH replication = {'class': %s", describedName(ks.Name),
		quoted(strings.TrimPrefix(repl["class"], "org.apache.cassandra.locator.")))
	for _, k := range slices.Sorted(maps.Keys(repl)) {
		if k != "class" {
			fmt.Fprintf(&b, ", %s: %s", quoted(k), quoted(repl[k]))
		}
	}
	fmt.Fprintf(&b, "}  AND durable_writes = %v;", ks.DurableWrites)
	return b.String()
}

func typeStatement(keyspace string, t *cqltype.Type) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TYPE %s.%s (\n", describedName(keyspace), describedName(t.Name))
	for i, f := range t.FieldNames {
		sep := ",\n"
		if i == len(t.FieldNames)-1 {
			sep = "\n"
		}
		fmt.Fprintf(&b, "    %s %s%s", describedName(f), t.Params[i].SchemaString(), sep)
	}
	b.WriteString(");")
	return b.String()
}

// tableStatement is a table's CREATE TABLE in DESCRIBE's layout: the key
// columns in key order, then static and regular columns (single-cell ones
// first, each group by name), the primary key, and every option. A
// virtual table's is VIRTUAL TABLE, with its comment alone for options,
// in a comment that warns it cannot be run.
func tableStatement(t *schema.Table, internals bool) string {
	virtual := schema.IsVirtualKeyspace(t.Keyspace)
	var cols []*schema.Column
	cols = append(cols, t.PartitionKey...)
	cols = append(cols, t.Clustering...)
	var others []*schema.Column
	for _, c := range t.Columns {
		if !c.IsPrimaryKey() {
			others = append(others, c)
		}
	}
	slices.SortStableFunc(others, func(a, b *schema.Column) int {
		rank := func(c *schema.Column) int {
			r := 0
			if c.Kind != schema.Static {
				r += 2
			}
			if c.Type.IsMultiCell() {
				r++
			}
			return r
		}
		if d := rank(a) - rank(b); d != 0 {
			return d
		}
		return strings.Compare(a.Name, b.Name)
	})
	cols = append(cols, others...)
	single := len(t.PartitionKey) == 1 && len(t.Clustering) == 0
	name := describedName(t.Keyspace) + "." + describedName(t.Name)
	var b strings.Builder
	create := "CREATE"
	if virtual {
		fmt.Fprintf(&b, "/*\nWarning: Table %s is a virtual table and cannot be recreated with CQL.\nStructure, for reference:\n", name)
		create = "VIRTUAL"
	}
	fmt.Fprintf(&b, "%s TABLE %s (\n", create, name)
	for i, c := range cols {
		fmt.Fprintf(&b, "    %s %s", describedName(c.Name), c.Type.SchemaString())
		if c.Kind == schema.Static {
			b.WriteString(" static")
		}
		if single && c.Kind == schema.PartitionKey {
			b.WriteString(" PRIMARY KEY")
		}
		if !single || i < len(cols)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	if !single {
		names := func(cs []*schema.Column) []string {
			out := make([]string, len(cs))
			for i, c := range cs {
				out[i] = describedName(c.Name)
			}
			return out
		}
		pk := strings.Join(names(t.PartitionKey), ", ")
		if len(t.PartitionKey) > 1 {
			pk = "(" + pk + ")"
		}
		key := append([]string{pk}, names(t.Clustering)...)
		fmt.Fprintf(&b, "    PRIMARY KEY (%s)\n", strings.Join(key, ", "))
	}
	b.WriteString(") WITH ")
	var opts []string
	if internals {
		opts = append(opts, "ID = "+cqltype.FormatUUID(t.ID[:]))
	}
	if len(t.Clustering) > 0 {
		var order []string
		for _, c := range t.Clustering {
			dir := "ASC"
			if c.Descending {
				dir = "DESC"
			}
			order = append(order, describedName(c.Name)+" "+dir)
		}
		opts = append(opts, "CLUSTERING ORDER BY ("+strings.Join(order, ", ")+")")
	}
	if virtual {
		opts = append(opts, "comment = "+quoted(t.Options.Comment))
	} else {
		opts = append(opts, describedOptions(t.Options)...)
	}
	b.WriteString(strings.Join(opts, "\n    AND "))
	b.WriteByte(';')
	if virtual {
		b.WriteString("\n*/")
	}
	return b.String()
}

func describedOptions(o schema.TableParams) []string {
	ext := map[string]string{}
	for k, v := range o.ShownExtensions() {
		ext[k] = fmt.Sprintf("0x%x", v)
	}
	out := []string{
		"additional_write_policy = " + quoted(o.AdditionalWritePolicy),
		"bloom_filter_fp_chance = " + cqltype.JavaFloatText(o.BloomFilterFPChance, 64),
		"caching = " + describedMap(o.Caching, true),
		"cdc = false",
		"comment = " + quoted(o.Comment),
		"compaction = " + describedMap(o.Compaction, true),
		"compression = " + describedMap(o.Compression, true),
		"memtable = 'default'",
		"crc_check_chance = " + cqltype.JavaFloatText(o.CRCCheckChance, 64),
		"default_time_to_live = " + strconv.Itoa(int(o.DefaultTimeToLive)),
		"extensions = " + describedMap(ext, false),
		"gc_grace_seconds = " + strconv.Itoa(int(o.GCGraceSeconds)),
		"max_index_interval = " + strconv.Itoa(int(o.MaxIndexInterval)),
		"memtable_flush_period_in_ms = " + strconv.Itoa(int(o.MemtableFlushPeriodMs)),
		"min_index_interval = " + strconv.Itoa(int(o.MinIndexInterval)),
		"read_repair = " + quoted(o.ReadRepair),
		"speculative_retry = " + quoted(o.SpeculativeRetry),
	}
	if g := o.TombstoneGC(); g != schema.DefaultTombstoneGC {
		out = append(out, "tombstone_gc = "+describedMap(g.Map(), true))
	}
	return out
}

// describedMap prints {'k': 'v', ...} with the keys sorted; values unquoted
// when quoteValues is false (extensions' blobs).
func describedMap(m map[string]string, quoteValues bool) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		if quoteValues {
			v = quoted(v)
		}
		parts = append(parts, quoted(k)+": "+v)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
