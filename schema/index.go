package schema

import (
	"fmt"
	"hash/crc32"
	"regexp"
	"slices"
	"strings"

	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/mutation"
)

// IndexKind is an index's kind in system_schema.indexes.
type IndexKind string

// The index kinds Cassandra writes: COMPOSITES for CREATE INDEX, CUSTOM for
// CREATE CUSTOM INDEX (a storage-attached index among them).
const (
	IndexComposites IndexKind = "COMPOSITES"
	IndexCustom     IndexKind = "CUSTOM"
)

// The options every index has, and a custom index's class.
const (
	IndexTargetOption = "target"
	IndexClassOption  = "class_name"
	// SimilarityOption is a vector index's similarity function:
	// cosine (the default), dot_product or euclidean, any case.
	SimilarityOption = "similarity_function"
)

// StorageAttachedIndexClass is the class Cassandra 5.0 names its
// storage-attached indexes by.
const StorageAttachedIndexClass = "org.apache.cassandra.index.sai.StorageAttachedIndex"

// Index is a secondary index of a table, as system_schema.indexes holds it.
type Index struct {
	Name    string
	Kind    IndexKind
	Options map[string]string
}

// IndexTarget is what an index reads: a column, and for a collection
// which part of it: "" (the value itself), "values", "keys", "entries" or
// "full", Cassandra's words.
type IndexTarget struct {
	Column   string
	Modifier string
}

// CQL renders the target as Cassandra writes it in the "target" option
// and in CREATE INDEX: keys(m), or the column alone.
func (t IndexTarget) CQL() string {
	name := cqltype.QuoteIdent(t.Column)
	if t.Modifier == "" {
		return name
	}
	return t.Modifier + "(" + name + ")"
}

var targetPattern = regexp.MustCompile(`^(keys|entries|values|full)\((.+)\)$`)

// Targets parses the "target" option: targets separated by commas.
func (ix *Index) Targets() ([]IndexTarget, error) {
	raw := ix.Options[IndexTargetOption]
	if raw == "" {
		return nil, nil
	}
	var out []IndexTarget
	for _, part := range splitTargets(raw) {
		t := IndexTarget{Column: part}
		if m := targetPattern.FindStringSubmatch(part); m != nil {
			t.Modifier, t.Column = m[1], m[2]
		}
		if strings.HasPrefix(t.Column, `"`) {
			if len(t.Column) < 2 || !strings.HasSuffix(t.Column, `"`) {
				return nil, fmt.Errorf("schema: index %s: bad target %q", ix.Name, raw)
			}
			t.Column = strings.ReplaceAll(t.Column[1:len(t.Column)-1], `""`, `"`)
		}
		out = append(out, t)
	}
	return out, nil
}

// splitTargets splits at the commas outside double quotes.
func splitTargets(s string) []string {
	var out []string
	quoted, start := false, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			quoted = !quoted
		case ',':
			if !quoted {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

// DependsOn reports whether the index reads the column.
func (ix *Index) DependsOn(column string) bool {
	targets, _ := ix.Targets()
	return slices.ContainsFunc(targets, func(t IndexTarget) bool { return t.Column == column })
}

// Index returns the table's index of that name, or nil.
func (t *Table) Index(name string) *Index {
	for _, ix := range t.Indexes {
		if ix.Name == name {
			return ix
		}
	}
	return nil
}

// FindIndex returns the index of that name in the keyspace and its table;
// index names are unique in a keyspace.
func (k *Keyspace) FindIndex(name string) (*Table, *Index) {
	for _, t := range k.Tables {
		if ix := t.Index(name); ix != nil {
			return t, ix
		}
	}
	return nil, nil
}

// IndexMutation is an index's row in system_schema.indexes.
func IndexMutation(t *Table, ix *Index, w *CellWriter) (*mutation.Mutation, error) {
	return IndexesTable.InsertMutation(map[string][]byte{
		"keyspace_name": text(t.Keyspace),
		"table_name":    text(t.Name),
		"index_name":    text(ix.Name),
		"kind":          text(string(ix.Kind)),
		"options":       TextMap(ix.Options),
	}, w)
}

// DropIndexMutation deletes an index's row.
func DropIndexMutation(t *Table, name string, w *CellWriter) (*mutation.Mutation, error) {
	clustering, err := IndexesTable.layout.Encode(nil, [][]byte{text(t.Name), text(name)})
	if err != nil {
		return nil, err
	}
	m := mutation.NewMutation(IndexesTable.ID, text(t.Keyspace))
	row := mutation.NewRow()
	row.Deletion = mutation.DeletionTime{MarkedForDeleteAt: w.Timestamp, LocalDeletionTime: w.Now}
	m.Rows = []mutation.RowUpdate{{Clustering: clustering, Row: row}}
	return m, nil
}

// loadIndexes attaches the stored indexes to their tables, by name.
func loadIndexes(read RowReader, keyspaces map[string]*Keyspace) error {
	rows, err := read(IndexesTable)
	if err != nil {
		return err
	}
	for _, r := range rows {
		t := tableOfRow(keyspaces, r)
		if t == nil {
			continue
		}
		opts, err := decodeTextMap(r["options"].Value)
		if err != nil {
			return fmt.Errorf("schema: %s: index %s: %w", t, r["index_name"].Value, err)
		}
		t.Indexes = append(t.Indexes, &Index{Name: string(r["index_name"].Value), Kind: IndexKind(r["kind"].Value), Options: opts})
	}
	for _, ks := range keyspaces {
		for _, t := range ks.Tables {
			slices.SortFunc(t.Indexes, func(a, b *Index) int { return strings.Compare(a.Name, b.Name) })
		}
	}
	return nil
}

// IndexTerm is the term an index keys value v of type typ by: its
// byte-comparable encoding without ties, so that values Cassandra calls
// equal are one term and terms sort as the values.
func IndexTerm(typ *cqltype.Type, v []byte) ([]byte, error) { return typ.AppendComparableTerm(nil, v) }

// StorageName names the index's files: its name, and a hash of what it
// indexes, so that an index dropped and made again under its name on
// something else never reads the old one's files.
func (ix *Index) StorageName() string {
	what := ix.Options[IndexTargetOption] + "\x00" + ix.Options[IndexClassOption]
	if sim, ok := ix.Options[SimilarityOption]; ok {
		what += "\x00" + strings.ToLower(sim)
	}
	return fmt.Sprintf("%s_%08x", ix.Name, crc32.ChecksumIEEE([]byte(what)))
}

// VectorSimilarity is, for an index of a vector column of t, its
// similarity function's name in lower case and the vector's dimension;
// ok is false for other indexes.
func (ix *Index) VectorSimilarity(t *Table) (similarity string, dimension int, ok bool) {
	targets, err := ix.Targets()
	if err != nil || len(targets) != 1 || ix.Options[IndexClassOption] != StorageAttachedIndexClass {
		return "", 0, false
	}
	c := t.Column(targets[0].Column)
	if c == nil || c.Type.Kind != cqltype.Vector {
		return "", 0, false
	}
	similarity = "cosine"
	if s, ok := ix.Options[SimilarityOption]; ok {
		similarity = strings.ToLower(s)
	}
	return similarity, c.Type.Dimension, true
}

// TermType is the type of the terms the index holds for a target of
// column c: the value's, or a collection's element's, key's or value's.
func TermType(c *Column, tg IndexTarget) *cqltype.Type {
	t := c.Type
	switch tg.Modifier {
	case "keys":
		return t.Params[0]
	case "values":
		return t.Params[len(t.Params)-1]
	}
	return t
}

// Terms returns how the index reads an entry's terms, for the engine: the
// partition key's or a clustering column's component, a static or regular
// cell's value, a collection's elements, keys or entries. A value that is
// not of its type (which the write path refuses) gives no term.
func (ix *Index) Terms(t *Table) (func(partitionKey, clustering []byte, e *mutation.Entry, emit func([]byte)), error) {
	targets, err := ix.Targets()
	if err != nil {
		return nil, err
	}
	if len(targets) != 1 {
		return nil, fmt.Errorf("schema: index %s: %d targets", ix.Name, len(targets))
	}
	tg := targets[0]
	c := t.Column(tg.Column)
	if c == nil {
		return nil, fmt.Errorf("schema: index %s: no column %s in %s", ix.Name, tg.Column, t)
	}
	_, _, vectorIndex := ix.VectorSimilarity(t)
	term := func(typ *cqltype.Type, v []byte, emit func([]byte)) {
		if vectorIndex {
			// A vector index ranks the values themselves.
			if len(v) > 0 {
				emit(v)
			}
			return
		}
		if b, err := IndexTerm(typ, v); err == nil {
			emit(b)
		}
	}
	switch c.Kind {
	case PartitionKey:
		return func(partitionKey, _ []byte, _ *mutation.Entry, emit func([]byte)) {
			if parts, err := t.SplitPartitionKey(partitionKey); err == nil && c.Position < len(parts) {
				term(c.Type, parts[c.Position], emit)
			}
		}, nil
	case Clustering:
		return func(_, clustering []byte, e *mutation.Entry, emit func([]byte)) {
			if clustering == nil {
				return
			}
			if parts, err := t.layout.Decode(clustering); err == nil && c.Position < len(parts) {
				term(c.Type, parts[c.Position], emit)
			}
		}, nil
	}
	static := c.Kind == Static
	elem := TermType(c, tg)
	return func(_, _ []byte, e *mutation.Entry, emit func([]byte)) {
		if e.Row == nil || static != (e.Kind == mutation.StaticRowEntry) {
			return
		}
		for i := range e.Row.Cells {
			cell := &e.Row.Cells[i]
			if cell.Column != c.Name || cell.Tombstone {
				continue
			}
			if cell.Path == nil {
				term(c.Type, cell.Value, emit)
				continue
			}
			// A set's element and a map's key are the cell's path, in the
			// byte-comparable form the cell sorts by.
			var key []byte
			if c.Type.Kind == cqltype.Set || c.Type.Kind == cqltype.Map {
				var err error
				if key, _, err = c.Type.Params[0].DecodeComparable(cell.Path); err != nil {
					continue
				}
			}
			switch {
			case tg.Modifier == "keys":
				term(elem, key, emit)
			case tg.Modifier == "entries":
				k, err1 := IndexTerm(c.Type.Params[0], key)
				v, err2 := IndexTerm(c.Type.Params[1], cell.Value)
				if err1 == nil && err2 == nil {
					emit(append(k, v...))
				}
			case c.Type.Kind == cqltype.Set:
				term(elem, key, emit)
			default:
				term(elem, cell.Value, emit)
			}
		}
	}, nil
}
