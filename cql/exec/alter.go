package exec

import (
	"maps"
	"slices"
	"strings"

	"github.com/sibyldb/sibyl/cql"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/schema"
)

func (s *Session) alterTable(st *cql.AlterTable) (*Result, error) {
	ks, old, err := s.existingTable(st.Name, st.IfExists)
	if err != nil {
		return nil, err
	}
	if old == nil {
		return &Result{Kind: SchemaChangeResult}, nil // IF EXISTS, and it does not
	}
	ksName := ks.Name
	w := s.writer()
	cols := cloneColumns(old.Columns)
	opts := old.Options
	var extra []*mutation.Mutation
	dropped := maps.Clone(old.Dropped)
	skipped := 0 // columns IF [NOT] EXISTS passed over
	switch st.Action {
	case cql.AddColumns:
		for _, d := range st.Add {
			if old.Column(d.Name) != nil {
				if st.IfColumnNotExists {
					skipped++
					continue
				}
				return nil, invalidf("Invalid column name %s because it conflicts with an existing column", d.Name)
			}
			t, err := d.Type.Resolve(ksName, typeResolver(ks))
			if err != nil {
				return nil, asInvalid(err)
			}
			if _, dropped := old.Dropped[d.Name]; dropped && old.IsCounter() {
				return nil, invalidf("Cannot re-add previously dropped counter column %s", d.Name)
			}
			switch counter := t.Kind == cqltype.Counter; {
			case old.IsCounter() && !counter:
				return nil, configf("Cannot have a non counter column (\"%s\") in a counter table", d.Name)
			case !old.IsCounter() && counter:
				return nil, configf("Cannot have a counter column (\"%s\") in a non counter table", d.Name)
			}
			c := &schema.Column{Name: d.Name, Type: t, Kind: schema.Regular, Position: -1}
			if d.Static {
				if len(old.Clustering) == 0 {
					return nil, invalidf("Static columns are not allowed in COMPACT STORAGE tables or tables without clustering columns")
				}
				c.Kind = schema.Static
			}
			cols = append(cols, c)
		}
	case cql.DropColumns:
		for _, name := range st.Drop {
			c := old.Column(name)
			if c == nil {
				if st.IfColumnExists {
					skipped++
					continue
				}
				return nil, invalidf("Column %s was not found in table %s", name, old.Name)
			}
			if c.IsPrimaryKey() {
				return nil, invalidf("Cannot drop PRIMARY KEY part %s", name)
			}
			if deps := dependentIndexes(old, name); deps != "" {
				return nil, invalidf("Cannot drop column %s because it has dependent secondary indexes (%s)", name, deps)
			}
			cols = withoutColumn(cols, name)
			ms, err := schema.DropColumnMutations(old, c, w)
			if err != nil {
				return nil, err
			}
			extra = append(extra, ms...)
			dropped[name] = w.Timestamp
		}
	case cql.RenameColumns:
		// Names resolve against the table as it was, as Cassandra resolves
		// them: "RENAME a TO b AND b TO c" renames the original b.
		clones := map[string]*schema.Column{}
		for _, c := range cols {
			clones[c.Name] = c
		}
		for _, r := range st.Rename {
			c := clones[r.From]
			if old.Column(r.From) == nil {
				if st.IfColumnExists {
					skipped++
					continue
				}
				return nil, invalidf("Column %s was not found in table %s", r.From, old.Name)
			}
			if !c.IsPrimaryKey() {
				return nil, invalidf("Cannot rename non PRIMARY KEY column %s", r.From)
			}
			if deps := dependentIndexes(old, r.From); deps != "" {
				return nil, invalidf("Can't rename column %s because it has dependent secondary indexes (%s)", r.From, deps)
			}
			if other := findColumn(cols, r.To); other != nil && other != c {
				return nil, invalidf("Cannot rename column %s to %s in table %s; another column with that name already exists", r.From, r.To, old.Name)
			}
			// The old name's row goes; the new one is written with the rest.
			ms, err := schema.DropColumnMutations(old, old.Column(r.From), w)
			if err != nil {
				return nil, err
			}
			extra = append(extra, ms[0])
			c.Name = r.To
		}
	case cql.SetOptions:
		if opts, err = tableOptions(ks, opts, st.Options); err != nil {
			return nil, err
		}
	}
	if skipped > 0 && skipped == len(st.Add)+len(st.Drop)+len(st.Rename) {
		return &Result{Kind: SchemaChangeResult}, nil // nothing left to change
	}
	t, err := schema.NewTable(ksName, old.Name, old.ID, cols, opts)
	if err != nil {
		return nil, asInvalid(err)
	}
	t.Dropped = dropped
	ms, err := schema.TableMutations(t, w)
	if err != nil {
		return nil, err
	}
	if err := s.apply(append(extra, ms...)...); err != nil {
		return nil, err
	}
	return changed("UPDATED", "TABLE", ksName, t.Name), nil
}

func cloneColumns(cols []*schema.Column) []*schema.Column {
	out := make([]*schema.Column, len(cols))
	for i, c := range cols {
		cc := *c
		out[i] = &cc
	}
	return out
}

func findColumn(cols []*schema.Column, name string) *schema.Column {
	for _, c := range cols {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func withoutColumn(cols []*schema.Column, name string) []*schema.Column {
	out := cols[:0]
	for _, c := range cols {
		if c.Name != name {
			out = append(out, c)
		}
	}
	return out
}

func (s *Session) dropType(st *cql.DropType) (*Result, error) {
	ksName, err := s.keyspaceOf(st.Name)
	if err != nil {
		return nil, err
	}
	ks := s.schema().Keyspace(ksName)
	if ks == nil || ks.Types[st.Name.Name] == nil {
		if st.IfExists {
			return &Result{Kind: SchemaChangeResult}, nil
		}
		return nil, invalidf("Type '%s.%s' doesn't exist", ksName, st.Name.Name)
	}
	for _, t := range ks.Tables {
		for _, c := range t.Columns {
			if usesType(c.Type, ksName, st.Name.Name) {
				return nil, invalidf("Cannot drop user type %s.%s as it is still used by table %s", ksName, st.Name.Name, t.Name)
			}
		}
	}
	for _, other := range ks.Types {
		if other.Name != st.Name.Name && usesType(other, ksName, st.Name.Name) {
			return nil, invalidf("Cannot drop user type %s.%s as it is still used by user type %s", ksName, st.Name.Name, other.Name)
		}
	}
	m, err := schema.DropTypeMutation(ksName, st.Name.Name, s.writer())
	if err != nil {
		return nil, err
	}
	if err := s.apply(m); err != nil {
		return nil, err
	}
	return changed("DROPPED", "TYPE", ksName, st.Name.Name), nil
}

func (s *Session) alterType(st *cql.AlterType) (*Result, error) {
	ksName, err := s.keyspaceOf(st.Name)
	if err != nil {
		return nil, err
	}
	ks := s.schema().Keyspace(ksName)
	var old *cqltype.Type
	if ks != nil {
		old = ks.Types[st.Name.Name]
	}
	if old == nil {
		if st.IfExists {
			return &Result{Kind: SchemaChangeResult}, nil
		}
		return nil, invalidf("Type %s.%s doesn't exist", ksName, st.Name.Name)
	}
	fullName := cqltype.QuoteIdent(ksName) + "." + cqltype.QuoteIdent(old.Name)
	names := slices.Clone(old.FieldNames)
	types := slices.Clone(old.Params)
	switch st.Action {
	case cql.AlterFieldType:
		return nil, invalidf("Altering field types is no longer supported")
	case cql.AddField:
		f := st.Add
		if err := checkFieldType(f.Type); err != nil {
			return nil, err
		}
		if slices.Contains(names, f.Name) {
			if st.IfFieldNotExists {
				return &Result{Kind: SchemaChangeResult}, nil
			}
			return nil, invalidf("Cannot add field %s to type %s: a field with name %s already exists", f.Name, fullName, f.Name)
		}
		t, err := f.Type.Resolve(ksName, typeResolver(ks))
		if err != nil {
			return nil, asInvalid(err)
		}
		if usesType(t, ksName, old.Name) {
			return nil, invalidf("Cannot add new field %s of type %s to user type %s as it would create a circular reference", f.Name, f.Type, fullName)
		}
		var keyed []string
		for _, tbl := range sortedTables(ks) {
			for _, c := range tbl.PartitionKey {
				if usesType(c.Type, ksName, old.Name) {
					keyed = append(keyed, cqltype.QuoteIdent(ksName)+"."+cqltype.QuoteIdent(tbl.Name))
					break
				}
			}
		}
		if len(keyed) > 0 {
			return nil, invalidf("Cannot add new field %s of type %s to user type %s as the type is being used in partition key by the following tables: %s",
				f.Name, f.Type, fullName, strings.Join(keyed, ", "))
		}
		names, types = append(names, f.Name), append(types, t)
	case cql.RenameFields:
		for _, r := range st.Rename {
			i := slices.Index(old.FieldNames, r.From)
			if i < 0 {
				if st.IfFieldExists {
					continue
				}
				// Cassandra's spelling.
				return nil, invalidf("Unkown field %s in user type %s", r.From, fullName)
			}
			names[i] = r.To
		}
		for i, n := range names {
			if slices.Index(names, n) != i {
				// Cassandra names the keyspace where the type was meant.
				return nil, invalidf("Duplicate field name %s in type %s", n, ksName)
			}
		}
	}
	if slices.Equal(names, old.FieldNames) {
		return &Result{Kind: SchemaChangeResult}, nil // RENAME IF EXISTS of no field
	}
	m, err := schema.TypeMutation(cqltype.UDTOf(ksName, old.Name, names, types, false), s.writer())
	if err != nil {
		return nil, err
	}
	if err := s.apply(m); err != nil {
		return nil, err
	}
	return changed("UPDATED", "TYPE", ksName, old.Name), nil
}

// usesType reports whether t is, or contains, the named user type.
func usesType(t *cqltype.Type, keyspace, name string) bool {
	if t.Kind == cqltype.UDT && t.Keyspace == keyspace && t.Name == name {
		return true
	}
	for _, p := range t.Params {
		if usesType(p, keyspace, name) {
			return true
		}
	}
	return false
}

func (s *Session) truncate(st *cql.Truncate) (*Result, error) {
	t, err := s.table(st.Table)
	if err != nil {
		return nil, err
	}
	if schema.IsVirtualKeyspace(t.Keyspace) {
		return nil, invalidf("Truncation is not supported by table %s.%s", describedName(t.Keyspace), describedName(t.Name))
	}
	if schema.IsSystemKeyspace(t.Keyspace) {
		return nil, unauthorizedf("%s keyspace is not user-modifiable.", t.Keyspace)
	}
	if err := s.c.Truncate(t); err != nil {
		return nil, coordinatorError(err)
	}
	return &Result{Kind: VoidResult}, nil
}
