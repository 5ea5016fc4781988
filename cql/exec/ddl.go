package exec

import (
	"crypto/rand"
	"fmt"

	"github.com/sibyldb/sibyl/auth"
	"github.com/sibyldb/sibyl/cql"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/schema"
)

// keyspaceOptions reads a keyspace's WITH options; durable is nil when
// durable_writes is not given.
func keyspaceOptions(opts []cql.Option) (replication map[string]string, durable *bool, err error) {
	if err := checkRepeats(opts); err != nil {
		return nil, nil, err
	}
	for _, o := range opts {
		switch o.Name {
		case "replication":
			if replication, err = optionMap(o); err != nil {
				return nil, nil, err
			}
		case "durable_writes":
			b, err := optionBool(o)
			if err != nil {
				return nil, nil, err
			}
			durable = &b
		default:
			return nil, nil, syntaxf("Unknown property '%s'", o.Name)
		}
	}
	return replication, durable, nil
}

func (s *Session) createKeyspace(st *cql.CreateKeyspace) (*Result, error) {
	if schema.IsSystemKeyspace(st.Name) {
		return nil, unauthorizedf("%s keyspace is not user-modifiable.", st.Name)
	}
	if err := schema.CheckKeyspaceName(st.Name); err != nil {
		return nil, asInvalid(err)
	}
	repl, durable, err := keyspaceOptions(st.Options)
	if err != nil {
		return nil, err
	}
	if repl == nil {
		return nil, invalidf("Missing mandatory option 'replication'")
	}
	if s.schema().Keyspace(st.Name) != nil {
		if st.IfNotExists {
			return &Result{Kind: SchemaChangeResult}, nil
		}
		return nil, &Error{Code: AlreadyExists, Keyspace: st.Name, Message: fmt.Sprintf("Cannot add existing keyspace \"%s\"", st.Name)}
	}
	return s.writeKeyspace(st.Name, repl, nil, durable == nil || *durable, "CREATED")
}

// writeKeyspace checks a keyspace's definition (previous is its
// replication before an ALTER) and writes its row.
func (s *Session) writeKeyspace(name string, repl, previous map[string]string, durable bool, change string) (*Result, error) {
	r, err := schema.ParseReplication(name, repl, s.dataCenters(), previous)
	if err != nil {
		return nil, asInvalid(err)
	}
	w := s.writer()
	m, err := schema.KeyspaceMutation(schema.NewKeyspace(name, r, durable), w)
	if err != nil {
		return nil, err
	}
	ms := []*mutation.Mutation{m}
	if change == "CREATED" {
		grants, err := s.creatorGrants(w, auth.KeyspaceResource(name), auth.Resource{Kind: auth.KeyspaceFunctions, Keyspace: name})
		if err != nil {
			return nil, err
		}
		ms = append(ms, grants...)
	}
	if err := s.apply(ms...); err != nil {
		return nil, err
	}
	return changed(change, "KEYSPACE", name, ""), nil
}

func (s *Session) alterKeyspace(st *cql.AlterKeyspace) (*Result, error) {
	old := s.schema().Keyspace(st.Name)
	if old == nil {
		if st.IfExists {
			return &Result{Kind: SchemaChangeResult}, nil
		}
		return nil, invalidf("Keyspace '%s' doesn't exist", st.Name)
	}
	if replicatedSystemKeyspace(st.Name) {
		return s.alterReplicatedSystemKeyspace(st, old)
	}
	if _, err := s.userKeyspace(st.Name); err != nil {
		return nil, err
	}
	repl, durable, err := keyspaceOptions(st.Options)
	if err != nil {
		return nil, err
	}
	previous := old.Replication.Map()
	if _, ok := repl["class"]; !ok && len(repl) == 0 {
		repl = previous // replication = {} or none keeps it as it is
	}
	keep := old.DurableWrites
	if durable != nil {
		keep = *durable
	}
	return s.writeKeyspace(st.Name, repl, previous, keep, "UPDATED")
}

// replicatedSystemKeyspace reports whether Cassandra lets operators
// change a system keyspace's replication: system_auth, system_distributed
// and system_traces.
func replicatedSystemKeyspace(name string) bool {
	return name == schema.SystemAuthKeyspace || name == schema.SystemDistributedKeyspace || name == schema.SystemTracesKeyspace
}

// alterReplicatedSystemKeyspace takes the ALTER KEYSPACE operators run on
// system_auth (Cassandra's guides ask for it on every new cluster), checks
// it as any other, and changes nothing: every node holds system_auth (its
// changes go through the metadata log), and each node keeps its own
// system_distributed and system_traces. The client is told so.
func (s *Session) alterReplicatedSystemKeyspace(st *cql.AlterKeyspace, old *schema.Keyspace) (*Result, error) {
	repl, _, err := keyspaceOptions(st.Options)
	if err != nil {
		return nil, err
	}
	if len(repl) > 0 {
		if _, err := schema.ParseReplication(st.Name, repl, s.dataCenters(), old.Replication.Map()); err != nil {
			return nil, asInvalid(err)
		}
	}
	why := "every node holds system_auth whatever its replication says"
	if st.Name != schema.SystemAuthKeyspace {
		why = "each node keeps its own " + st.Name
	}
	return &Result{Kind: SchemaChangeResult, Warnings: []string{st.Name + "'s replication is not changed: " + why}}, nil
}

func (s *Session) dropKeyspace(st *cql.DropKeyspace) (*Result, error) {
	if s.schema().Keyspace(st.Name) == nil {
		if st.IfExists {
			return &Result{Kind: SchemaChangeResult}, nil
		}
		return nil, invalidf("Keyspace '%s' doesn't exist", st.Name)
	}
	if _, err := s.userKeyspace(st.Name); err != nil {
		return nil, err
	}
	w := s.writer()
	revokes, err := s.revokeAllOn(w, auth.KeyspaceResource(st.Name))
	if err != nil {
		return nil, err
	}
	if err := s.apply(append(schema.DropKeyspaceMutations(st.Name, w), revokes...)...); err != nil {
		return nil, err
	}
	if s.keyspace == st.Name {
		s.keyspace = ""
	}
	return changed("DROPPED", "KEYSPACE", st.Name, ""), nil
}

func (s *Session) createTable(st *cql.CreateTable) (*Result, error) {
	ksName, err := s.keyspaceOf(st.Name)
	if err != nil {
		return nil, err
	}
	ks, err := s.userKeyspace(ksName)
	if err != nil {
		return nil, err
	}
	if ks.Tables[st.Name.Name] != nil {
		if st.IfNotExists {
			return &Result{Kind: SchemaChangeResult}, nil
		}
		return nil, &Error{Code: AlreadyExists, Keyspace: ksName, Table: st.Name.Name,
			Message: fmt.Sprintf("Cannot add already existing table \"%s\" to keyspace \"%s\"", st.Name.Name, ksName)}
	}
	cols, err := tableColumns(ks, st)
	if err != nil {
		return nil, err
	}
	opts, err := tableOptions(ks, schema.DefaultTableParams(), st.Options)
	if err != nil {
		return nil, err
	}
	t, err := schema.NewTable(ksName, st.Name.Name, newTableID(), cols, opts)
	if err == nil {
		err = schema.CheckTableName(ksName, st.Name.Name)
	}
	if err != nil {
		return nil, asInvalid(err)
	}
	w := s.writer()
	ms, err := schema.TableMutations(t, w)
	if err != nil {
		return nil, err
	}
	grants, err := s.creatorGrants(w, auth.TableResource(ksName, t.Name))
	if err != nil {
		return nil, err
	}
	if err := s.apply(append(ms, grants...)...); err != nil {
		return nil, err
	}
	return changed("CREATED", "TABLE", ksName, t.Name), nil
}

// tableColumns turns CREATE TABLE's column list, primary key and
// clustering order into columns, with Cassandra's checks and messages.
func tableColumns(ks *schema.Keyspace, st *cql.CreateTable) ([]*schema.Column, error) {
	byName := map[string]*schema.Column{}
	var cols []*schema.Column
	for _, d := range st.Columns {
		if byName[d.Name] != nil {
			return nil, invalidf("Multiple definition of identifier %s", d.Name)
		}
		t, err := d.Type.Resolve(ks.Name, typeResolver(ks))
		if err != nil {
			return nil, asInvalid(err)
		}
		c := &schema.Column{Name: d.Name, Type: t, Kind: schema.Regular, Position: -1}
		if d.Static {
			c.Kind = schema.Static
		}
		byName[d.Name] = c
		cols = append(cols, c)
	}
	if len(st.PrimaryKey.PartitionKey) == 0 {
		return nil, invalidf("No PRIMARY KEY specifed (exactly one required)")
	}
	key := func(name string, kind schema.ColumnKind, pos int) error {
		c := byName[name]
		if c == nil {
			return invalidf("Unknown definition %s referenced in PRIMARY KEY", name)
		}
		if c.Kind == schema.Static {
			return invalidf("Static column %s cannot be part of the PRIMARY KEY", name)
		}
		if c.Kind != schema.Regular {
			return invalidf("Multiple definition of identifier %s", name)
		}
		if c.Type.Kind == cqltype.Duration {
			return invalidf("duration type is not supported for PRIMARY KEY column '%s'", name)
		}
		c.Kind, c.Position = kind, pos
		return nil
	}
	for i, n := range st.PrimaryKey.PartitionKey {
		if err := key(n, schema.PartitionKey, i); err != nil {
			return nil, err
		}
	}
	for i, n := range st.PrimaryKey.Clustering {
		if err := key(n, schema.Clustering, i); err != nil {
			return nil, err
		}
	}
	for i, o := range st.ClusteringOrder {
		c := byName[o.Column]
		if c == nil || c.Kind != schema.Clustering {
			return nil, invalidf("Only clustering key columns can be defined in CLUSTERING ORDER directive")
		}
		if i >= len(st.PrimaryKey.Clustering) || st.PrimaryKey.Clustering[i] != o.Column {
			return nil, invalidf("The order of columns in the CLUSTERING ORDER directive must match that of the clustering columns (%s must appear before %s)",
				st.PrimaryKey.Clustering[min(i, len(st.PrimaryKey.Clustering)-1)], o.Column)
		}
		c.Descending = o.Descending
	}
	return cols, nil
}

// existingTable finds the table an ALTER or DROP TABLE names; nil without
// an error when it does not exist and IF EXISTS was given.
func (s *Session) existingTable(n cql.QualifiedName, ifExists bool) (*schema.Keyspace, *schema.Table, error) {
	ksName, err := s.keyspaceOf(n)
	if err != nil {
		return nil, nil, err
	}
	ks := s.schema().Keyspace(ksName)
	if ks == nil || ks.Tables[n.Name] == nil {
		switch {
		case ifExists:
			return nil, nil, nil
		case ks == nil:
			return nil, nil, invalidf("Keyspace '%s' doesn't exist", ksName)
		}
		return nil, nil, invalidf("Table '%s.%s' doesn't exist", ksName, n.Name)
	}
	if _, err := s.userKeyspace(ksName); err != nil {
		return nil, nil, err
	}
	return ks, ks.Tables[n.Name], nil
}

func (s *Session) dropTable(st *cql.DropTable) (*Result, error) {
	ks, t, err := s.existingTable(st.Name, st.IfExists)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return &Result{Kind: SchemaChangeResult}, nil // IF EXISTS, and it does not
	}
	ksName := ks.Name
	w := s.writer()
	ms, err := schema.DropTableMutations(t, w)
	if err != nil {
		return nil, err
	}
	revokes, err := s.revokeAllOn(w, auth.TableResource(ksName, t.Name))
	if err != nil {
		return nil, err
	}
	if err := s.apply(append(ms, revokes...)...); err != nil {
		return nil, err
	}
	return changed("DROPPED", "TABLE", ksName, st.Name.Name), nil
}

func (s *Session) createType(st *cql.CreateType) (*Result, error) {
	ksName, err := s.keyspaceOf(st.Name)
	if err != nil {
		return nil, err
	}
	ks, err := s.userKeyspace(ksName)
	if err != nil {
		return nil, err
	}
	if ks.Types[st.Name.Name] != nil {
		if st.IfNotExists {
			return &Result{Kind: SchemaChangeResult}, nil
		}
		return nil, invalidf("A user type with name '%s' already exists", st.Name.Name)
	}
	names := make([]string, len(st.Fields))
	types := make([]*cqltype.Type, len(st.Fields))
	seen := map[string]bool{}
	for _, f := range st.Fields {
		if seen[f.Name] {
			return nil, invalidf("Duplicate field name '%s' in type '%s'", f.Name, st.Name.Name)
		}
		seen[f.Name] = true
	}
	for _, f := range st.Fields {
		if err := checkFieldType(f.Type); err != nil {
			return nil, err
		}
	}
	for i, f := range st.Fields {
		t, err := f.Type.Resolve(ksName, typeResolver(ks))
		if err != nil {
			return nil, asInvalid(err)
		}
		names[i], types[i] = f.Name, t
	}
	typ := cqltype.UDTOf(ksName, st.Name.Name, names, types, false)
	m, err := schema.TypeMutation(typ, s.writer())
	if err != nil {
		return nil, err
	}
	if err := s.apply(m); err != nil {
		return nil, err
	}
	return changed("CREATED", "TYPE", ksName, st.Name.Name), nil
}

// checkFieldType refuses, as Cassandra does before it resolves the type,
// what a user type's field may not be.
func checkFieldType(t *cql.TypeRef) error {
	if t.Kind == cqltype.Counter {
		return invalidf("A user type cannot contain counters")
	}
	if t.Kind == cqltype.UDT && !t.Frozen {
		return invalidf("A user type cannot contain non-frozen UDTs")
	}
	return nil
}

// typeResolver finds the user types of a keyspace; its errors are the
// statement's, whatever wraps them on the way.
func typeResolver(ks *schema.Keyspace) cqltype.UDTResolver {
	return func(keyspace, name string) (*cqltype.Type, error) {
		t, err := ks.ResolveType(keyspace, name)
		if err != nil {
			return nil, invalidf("%s", err)
		}
		return t, nil
	}
}

// newTableID returns a random (version 4) table id.
func newTableID() mutation.TableID {
	var id mutation.TableID
	_, _ = rand.Read(id[:])
	id[6] = id[6]&0x0f | 0x40
	id[8] = id[8]&0x3f | 0x80
	return id
}

// dataCenters are the data centres of the cluster, which a
// NetworkTopologyStrategy keyspace's replication must name among; nil
// where the coordinator does not know them.
func (s *Session) dataCenters() []string {
	if d, ok := s.c.(ClusterDescriber); ok {
		return d.ClusterInfo().DataCenters
	}
	return nil
}
