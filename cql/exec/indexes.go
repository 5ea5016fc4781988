package exec

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/sibyldb/sibyl/cql"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/schema"
)

// Secondary indexes as Cassandra 4.1 defines them (CreateIndexStatement,
// IndexAttributes, IndexTarget), with Cassandra 5.0's storage-attached
// index class accepted by its names.

// saiClassNames are the names USING may give a storage-attached index by,
// folded to lower case.
var saiClassNames = map[string]bool{
	"sai":                  true,
	"storageattachedindex": true,
	strings.ToLower(schema.StorageAttachedIndexClass): true,
}

const sasiClass = "org.apache.cassandra.index.sasi.SASIIndex"

// saiBooleanOptions are the text analysis options of a storage-attached
// index; similarity_function is its vector option.
var saiBooleanOptions = map[string]bool{"case_sensitive": true, "normalize": true, "ascii": true}

// saiOptionDefaults are those options' values when not given: the only
// ones taken yet.
var saiOptionDefaults = map[string]string{"case_sensitive": "true", "normalize": "false", "ascii": "false"}

// saiVectorOptions are the options of a vector index.
var saiVectorOptions = map[string]bool{
	"similarity_function": true, "optimize_for": true, "maximum_node_connections": true, "construction_beam_width": true,
}

var similarityFunctions = []string{"EUCLIDEAN", "DOT_PRODUCT", "COSINE"}

// saiTypes are the types a storage-attached index reads (Cassandra 5.0's
// SUPPORTED_TYPES), besides frozen ones and vectors.
var saiTypes = map[cqltype.Kind]bool{
	cqltype.Ascii: true, cqltype.Bigint: true, cqltype.Date: true, cqltype.Double: true, cqltype.Float: true,
	cqltype.Int: true, cqltype.Smallint: true, cqltype.Text: true, cqltype.Time: true, cqltype.Timestamp: true,
	cqltype.Timeuuid: true, cqltype.Tinyint: true, cqltype.UUID: true, cqltype.Inet: true, cqltype.Varint: true,
	cqltype.Decimal: true, cqltype.Boolean: true,
}

var nonWord = regexp.MustCompile(`\W`)

func (s *Session) createIndex(st *cql.CreateIndex) (*Result, error) {
	ksName := nameKeyspace(st.Table, "")
	if ksName == "" {
		ksName = nameKeyspace(st.Name, s.keyspace)
	}
	if ksName == "" {
		return nil, invalidf("No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename")
	}
	if st.Name.Keyspace != "" && st.Name.Keyspace != ksName {
		return nil, invalidf("Keyspace name '%s' doesn't match index name '%s'", ksName, st.Table)
	}
	kind, opts, err := indexAttributes(st)
	if err != nil {
		return nil, err
	}
	if schema.IsSystemKeyspace(ksName) || schema.IsVirtualKeyspace(ksName) {
		return nil, unauthorizedf("%s keyspace is not user-modifiable.", ksName)
	}
	ks := s.schema().Keyspace(ksName)
	if ks == nil {
		return nil, invalidf("Keyspace '%s' doesn't exist", ksName)
	}
	t := ks.Tables[st.Table.Name]
	if t == nil {
		return nil, invalidf("Table '%s' doesn't exist", st.Table.Name)
	}
	if st.Name.Name != "" {
		if other, _ := ks.FindIndex(st.Name.Name); other != nil {
			if st.IfNotExists {
				return &Result{Kind: SchemaChangeResult}, nil
			}
			return nil, invalidf("Index '%s' already exists", st.Name.Name)
		}
	}
	if t.IsCounter() {
		return nil, invalidf("Secondary indexes on counter tables aren't supported")
	}
	targets := make([]schema.IndexTarget, len(st.Targets))
	for i, raw := range st.Targets {
		c := t.Column(raw.Column)
		if c == nil {
			return nil, invalidf("Undefined column name %s in table %s", cqltype.QuoteIdent(raw.Column), t)
		}
		mod := raw.Kind.String()
		if raw.Kind == cql.IndexSimple && c.Type.IsCollection() {
			mod = cql.IndexValues.String()
		}
		targets[i] = schema.IndexTarget{Column: c.Name, Modifier: mod}
	}
	switch {
	case len(targets) == 0 && kind != schema.IndexCustom:
		return nil, invalidf("Only CUSTOM indexes can be created without specifying a target column")
	case len(targets) > 1 && kind != schema.IndexCustom:
		return nil, invalidf("Only CUSTOM indexes support multiple columns")
	case len(targets) > 1:
		seen := map[string]bool{}
		for _, tg := range targets {
			if seen[tg.Column] {
				return nil, invalidf("Duplicate column '%s' in index target list", tg.Column)
			}
			seen[tg.Column] = true
		}
	}
	for i, raw := range st.Targets {
		if err := checkIndexTarget(t, t.Column(targets[i].Column), raw.Kind, targets[i]); err != nil {
			return nil, err
		}
	}
	cqlTargets := make([]string, len(targets))
	for i, tg := range targets {
		cqlTargets[i] = tg.CQL()
	}
	opts[schema.IndexTargetOption] = strings.Join(cqlTargets, ",")
	if kind == schema.IndexCustom {
		if err := checkStorageAttached(t, targets, opts, st.Name.Name); err != nil {
			return nil, err
		}
	}
	name := st.Name.Name
	if name == "" {
		base := nonWord.ReplaceAllString(t.Name+"_"+targets[0].Column+"_idx", "")
		name = base
		for i := 1; ; i++ {
			if other, _ := ks.FindIndex(name); other == nil {
				break
			}
			name = fmt.Sprintf("%s_%d", base, i)
		}
	}
	ix := &schema.Index{Name: name, Kind: kind, Options: opts}
	for _, other := range t.Indexes {
		if other.Kind == ix.Kind && maps.Equal(other.Options, ix.Options) {
			if st.IfNotExists {
				return &Result{Kind: SchemaChangeResult}, nil
			}
			return nil, invalidf("Index %s is a duplicate of existing index %s", ix.Name, other.Name)
		}
	}
	m, err := schema.IndexMutation(t, ix, s.writer())
	if err != nil {
		return nil, err
	}
	if err := s.apply(m); err != nil {
		return nil, err
	}
	res := changed("UPDATED", "TABLE", ksName, t.Name)
	if _, _, ok := ix.VectorSimilarity(t); ok {
		res.Warnings = append(res.Warnings, vectorUsageWarning)
	}
	return res, nil
}

// vectorUsageWarning is the client warning of a new vector index, as
// Cassandra 5.0 words it; here every limit it lists holds but the level
// (a query at another is run at ONE, with a warning) and paging (the
// whole result comes in one page).
const vectorUsageWarning = "SAI ANN indexes on vector columns are experimental and are not recommended for production use.\n" +
	"They don't yet support SELECT queries with:\n" +
	" * Consistency level higher than ONE/LOCAL_ONE.\n" +
	" * Paging.\n" +
	" * No LIMIT clauses.\n" +
	" * PER PARTITION LIMIT clauses.\n" +
	" * GROUP BY clauses.\n" +
	" * Aggregation functions.\n" +
	" * Filters on columns without a SAI index."

// indexAttributes reads USING and WITH OPTIONS as IndexAttributes does,
// and returns the index's kind and its options but the target.
func indexAttributes(st *cql.CreateIndex) (schema.IndexKind, map[string]string, error) {
	if err := checkRepeats(st.Options); err != nil {
		return "", nil, err
	}
	opts := map[string]string{}
	for _, o := range st.Options {
		if o.Name != "options" {
			return "", nil, syntaxf("Unknown property '%s'", o.Name)
		}
		m, err := optionMap(o)
		if err != nil {
			return "", nil, err
		}
		opts = m
	}
	sai := st.HasUsing && saiClassNames[strings.ToLower(st.Using)]
	switch {
	case st.Custom && !st.HasUsing:
		return "", nil, invalidf("CUSTOM index requires specifying the index class")
	case !st.Custom && st.HasUsing && !sai:
		// Cassandra 5.0 takes CREATE INDEX ... USING 'sai' without CUSTOM.
		return "", nil, invalidf("Cannot specify index class for a non-CUSTOM index")
	case !st.Custom && !st.HasUsing && len(st.Options) > 0:
		return "", nil, invalidf("Cannot specify options for a non-CUSTOM index")
	}
	if _, ok := opts[schema.IndexClassOption]; ok {
		return "", nil, invalidf("Cannot specify class_name as a CUSTOM option")
	}
	if _, ok := opts[schema.IndexTargetOption]; ok {
		return "", nil, invalidf("Cannot specify target as a CUSTOM option")
	}
	if !st.HasUsing {
		return schema.IndexComposites, opts, nil
	}
	switch {
	case st.Using == sasiClass:
		return "", nil, invalidf("SASI indexes are disabled. Enable in cassandra.yaml to use.")
	case !sai:
		return "", nil, configf("Unable to find custom indexer class '%s'", st.Using)
	}
	var unknown []string
	for k := range opts {
		if !saiBooleanOptions[k] && !saiVectorOptions[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return "", nil, configf("Properties specified [%s] are not understood by StorageAttachedIndex", strings.Join(unknown, ", "))
	}
	opts[schema.IndexClassOption] = schema.StorageAttachedIndexClass
	return schema.IndexCustom, opts, nil
}

// checkStorageAttached refuses what Cassandra 5.0's StorageAttachedIndex
// refuses: several columns, a type it cannot read, a second index of the
// same target, and options that do not fit.
func checkStorageAttached(t *schema.Table, targets []schema.IndexTarget, opts map[string]string, name string) error {
	if len(targets) != 1 {
		return invalidf("A storage-attached index cannot be created over multiple columns: %s", opts[schema.IndexTargetOption])
	}
	tg := targets[0]
	c := t.Column(tg.Column)
	typ := c.Type
	if typ.IsCollection() && typ.IsMultiCell() {
		switch tg.Modifier {
		case "keys":
			typ = typ.Params[0]
		case "entries":
			for _, p := range typ.Params {
				if !saiTypes[p.Kind] && !p.Frozen {
					return invalidf("Unsupported type: %s", p.SchemaString())
				}
			}
			typ = nil
		default:
			typ = typ.Params[len(typ.Params)-1]
		}
	}
	if typ != nil && !saiTypes[typ.Kind] && !typ.Frozen && typ.Kind != cqltype.Tuple {
		return invalidf("Unsupported type: %s", typ.SchemaString())
	}
	for _, other := range t.Indexes {
		if other.Options[schema.IndexClassOption] != schema.StorageAttachedIndexClass {
			continue
		}
		if others, _ := other.Targets(); len(others) == 1 && others[0] == tg {
			return invalidf("Cannot create more than one storage-attached index on the same column: %s", c.Name)
		}
	}
	// Cassandra reads the vector options first, then the column's type;
	// its messages name the index null, as its check has none to hand.
	for _, k := range []string{"similarity_function", "optimize_for", "maximum_node_connections", "construction_beam_width"} {
		v, ok := opts[k]
		switch {
		case !ok:
		case k == "similarity_function" && !slices.Contains(similarityFunctions, strings.ToUpper(v)):
			return invalidf("Similarity function %s was not recognized for index null. Valid values are: %s", strings.ToUpper(v), strings.Join(similarityFunctions, ", "))
		case k == "optimize_for" && strings.ToUpper(v) != "LATENCY" && strings.ToUpper(v) != "RECALL":
			return invalidf("optimize_for '%s' was not recognized for index null. Valid values are: LATENCY, RECALL", strings.ToUpper(v))
		case k == "maximum_node_connections":
			return invalidf("Maximum node connections cannot be set without enabling SAI_VECTOR_ALLOW_CUSTOM_PARAMETERS")
		case k == "construction_beam_width":
			return invalidf("Construction beam width cannot be set without enabling SAI_VECTOR_ALLOW_CUSTOM_PARAMETERS")
		}
	}
	if c.Type.Kind == cqltype.Vector {
		for k := range opts {
			if saiBooleanOptions[k] {
				return invalidf("CQL type %s cannot be analyzed.", c.Type.SchemaString())
			}
		}
		switch {
		case !c.Type.IsFloatVector():
			return invalidf("SAI ANN indexes are only allowed on vector columns with float elements")
		case c.Type.Dimension == 1 && strings.EqualFold(cmp.Or(opts["similarity_function"], "cosine"), "cosine"):
			return invalidf("Cosine similarity is not supported for single-dimension vectors")
		}
		return nil
	}
	for k, v := range opts {
		switch {
		case saiVectorOptions[k]:
			return invalidf("CQL type %s cannot have vector options", c.Type.SchemaString())
		case saiBooleanOptions[k] && v == "":
			return invalidf("Empty value for boolean option '%s'", k)
		case saiBooleanOptions[k] && !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false"):
			return invalidf("Illegal value for boolean option '%s': %s", k, v)
		case saiBooleanOptions[k] && !strings.EqualFold(v, saiOptionDefaults[k]):
			// Text analysis would change what a term matches, in the
			// index and in the filters alike: not built yet.
			return invalidf("StorageAttachedIndex option %s = %s is not supported yet: values match exactly (%s = %s)", k, v, k, saiOptionDefaults[k])
		}
	}
	return nil
}

// checkIndexTarget refuses what Cassandra refuses of an index's column.
func checkIndexTarget(t *schema.Table, c *schema.Column, written cql.IndexTargetKind, tg schema.IndexTarget) error {
	typ := c.Type
	if typ.ReferencesDuration() {
		switch {
		case typ.IsCollection():
			return invalidf("Secondary indexes are not supported on collections containing durations")
		case typ.Kind == cqltype.Tuple:
			return invalidf("Secondary indexes are not supported on tuples containing durations")
		case typ.Kind == cqltype.UDT:
			return invalidf("Secondary indexes are not supported on UDTs containing durations")
		}
		return invalidf("Secondary indexes are not supported on duration columns")
	}
	if c.Kind == schema.PartitionKey && len(t.PartitionKey) == 1 {
		return invalidf("Cannot create secondary index on the only partition key column %s", c.Name)
	}
	frozenCollection := typ.IsCollection() && !typ.IsMultiCell()
	switch {
	case frozenCollection && written != cql.IndexFull:
		return invalidf("Cannot create %s() index on frozen column %s. Frozen collections are immutable and must be fully indexed by using the 'full(%s)' modifier",
			tg.Modifier, c.Name, c.Name)
	case !frozenCollection && written == cql.IndexFull:
		return invalidf("full() indexes can only be created on frozen collections")
	case !typ.IsCollection() && written != cql.IndexSimple:
		return invalidf("Cannot create %s() index on %s. Non-collection columns only support simple indexes", tg.Modifier, c.Name)
	case (written == cql.IndexKeys || written == cql.IndexEntries) && !(typ.Kind == cqltype.Map && typ.IsMultiCell()):
		return invalidf("Cannot create index on %s of column %s with non-map type", tg.Modifier, c.Name)
	case typ.Kind == cqltype.UDT && typ.IsMultiCell():
		return invalidf("Cannot create index on non-frozen UDT column %s", c.Name)
	}
	return nil
}

func (s *Session) dropIndex(st *cql.DropIndex) (*Result, error) {
	ksName, err := s.keyspaceOf(st.Name)
	if err != nil {
		return nil, err
	}
	var t *schema.Table
	if ks := s.schema().Keyspace(ksName); ks != nil {
		t, _ = ks.FindIndex(st.Name.Name)
	}
	if t == nil {
		if st.IfExists {
			return &Result{Kind: SchemaChangeResult}, nil
		}
		// The stray quote is Cassandra's.
		return nil, invalidf("Index '%s.%s' doesn't exist'", ksName, st.Name.Name)
	}
	m, err := schema.DropIndexMutation(t, st.Name.Name, s.writer())
	if err != nil {
		return nil, err
	}
	if err := s.apply(m); err != nil {
		return nil, err
	}
	return changed("UPDATED", "TABLE", ksName, t.Name), nil
}

// dependentIndexes names the indexes that read a column, for ALTER
// TABLE's refusals; "" when none does.
func dependentIndexes(t *schema.Table, column string) string {
	var names []string
	for _, ix := range t.Indexes {
		if ix.DependsOn(column) {
			names = append(names, ix.Name)
		}
	}
	return strings.Join(names, ", ")
}

// indexedQuery reports whether the table's indexes serve a query's
// restrictions, as a storage-attached index does: some relation is one an
// index answers, and so is every relation on a column outside the primary
// key.
func indexedQuery(t *schema.Table, where []cql.Relation) bool {
	if len(t.Indexes) == 0 {
		return false
	}
	served := false
	for _, r := range where {
		if indexServes(t, r) {
			served = true
			continue
		}
		if r.Kind == cql.ColumnRelation || r.Kind == cql.ElementRelation {
			if c := t.Column(r.Columns[0]); c != nil && !c.IsPrimaryKey() {
				return false
			}
		}
	}
	return served
}

// indexRead is what the replicas' indexes look up for a query: the first
// relation an index answers, an equality or CONTAINS before a range, with
// the other bound of a range on the same column; nil when none does. The
// filters still check every row, so the other relations need no index.
func indexRead(t *schema.Table, where []cql.Relation, bound *binding) (*request.IndexRead, error) {
	pick := -1
	var ix *schema.Index
	for i, r := range where {
		if found := indexFor(t, r); found != nil && (pick < 0 || !isRange(r.Op) && isRange(where[pick].Op)) {
			pick, ix = i, found
		}
	}
	if pick < 0 || bound.preparing() {
		return nil, nil
	}
	targets, _ := ix.Targets()
	c := t.Column(targets[0].Column)
	typ := schema.TermType(c, targets[0])
	termOf := func(r cql.Relation) ([]byte, error) {
		v, err := term(r.Value, typ, c.Name, bound)
		if err != nil || v == nil {
			return nil, err
		}
		return schema.IndexTerm(typ, v)
	}
	out := &request.IndexRead{Index: ix.StorageName()}
	for i, r := range where {
		if i != pick && !(isRange(where[pick].Op) && isRange(r.Op) && indexFor(t, r) == ix) {
			continue
		}
		b, err := termOf(r)
		if err != nil || b == nil {
			return nil, err // the filters refuse a null
		}
		switch r.Op {
		case cql.OpGt, cql.OpGte:
			out.Lo, out.LoInclusive = b, r.Op == cql.OpGte
		case cql.OpLt, cql.OpLte:
			out.Hi, out.HiInclusive = b, r.Op == cql.OpLte
		default:
			out.Lo, out.Hi, out.LoInclusive, out.HiInclusive = b, b, true, true
		}
	}
	return out, nil
}

func isRange(op cql.Operator) bool {
	return op == cql.OpLt || op == cql.OpLte || op == cql.OpGt || op == cql.OpGte
}

// indexServes reports whether an index of the table answers a relation:
// equality on a value (or a frozen collection whole), ranges too for a
// storage-attached index, CONTAINS on a collection's values and CONTAINS
// KEY on a map's keys.
func indexServes(t *schema.Table, r cql.Relation) bool { return indexFor(t, r) != nil }

// indexFor is the index that answers a relation, or nil.
func indexFor(t *schema.Table, r cql.Relation) *schema.Index {
	if r.Kind != cql.ColumnRelation || len(r.Columns) != 1 {
		return nil
	}
	for _, ix := range t.Indexes {
		targets, err := ix.Targets()
		if err != nil || len(targets) != 1 || targets[0].Column != r.Columns[0] {
			continue
		}
		switch targets[0].Modifier {
		case "", "full":
			switch r.Op {
			case cql.OpEq:
				return ix
			case cql.OpLt, cql.OpLte, cql.OpGt, cql.OpGte:
				if ix.Kind == schema.IndexCustom {
					return ix
				}
			}
		case "values":
			if r.Op == cql.OpContains {
				return ix
			}
		case "keys":
			if r.Op == cql.OpContainsKey {
				return ix
			}
		}
	}
	return nil
}

// readsOneReplica reports whether a read at the level asks one replica.
func readsOneReplica(c request.Consistency) bool {
	switch c {
	case request.Any, request.One, request.LocalOne:
		return true
	}
	return false
}
