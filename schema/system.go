package schema

import (
	"crypto/md5"
	"fmt"
	"slices"
	"strings"

	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/internal/invariants"
	"github.com/sibyldb/sibyl/mutation"
)

// Keyspace names the node keeps for itself.
const (
	SystemKeyspace            = "system"
	SystemSchemaKeyspace      = "system_schema"
	SystemAuthKeyspace        = "system_auth"
	SystemDistributedKeyspace = "system_distributed"
	SystemTracesKeyspace      = "system_traces"
)

// SystemTableID is the id Cassandra gives a system table: a name-based
// (version 3, MD5) UUID of the keyspace and table names concatenated, so
// every node agrees on it without a schema.
func SystemTableID(keyspace, table string) mutation.TableID {
	return mutation.TableID(nameUUID([]byte(keyspace + table)))
}

// nameUUID is Java's UUID.nameUUIDFromBytes: MD5, version 3, IETF variant.
func nameUUID(b []byte) [16]byte {
	sum := md5.Sum(b)
	sum[6] = sum[6]&0x0f | 0x30
	sum[8] = sum[8]&0x3f | 0x80
	return sum
}

// systemTable builds a system table's definition from "name type" column
// specs; the key columns are named in order. A bad definition is a bug here,
// not input.
func systemTable(keyspace, name string, partitionKey, clustering []string, specs ...string) *Table {
	kinds := map[string]ColumnKind{}
	positions := map[string]int{}
	for i, n := range partitionKey {
		kinds[n], positions[n] = PartitionKey, i
	}
	for i, n := range clustering {
		kinds[n], positions[n] = Clustering, i
	}
	var cols []*Column
	for _, spec := range specs {
		name, typ, _ := strings.Cut(spec, " ")
		t, err := cqltype.Parse(typ, keyspace, nil)
		if err != nil {
			panic(invariants.Failf("schema: system table %s.%s column %s: %v", keyspace, name, spec, err))
		}
		kind, ok := kinds[name]
		pos := positions[name]
		if !ok {
			kind, pos = Regular, -1
		}
		cols = append(cols, &Column{Name: name, Type: t, Kind: kind, Position: pos})
	}
	opts := DefaultTableParams()
	opts.Comment = name
	t, err := NewTable(keyspace, name, SystemTableID(keyspace, name), cols, opts)
	if err != nil {
		panic(invariants.Failf("schema: system table %s.%s: %v", keyspace, name, err))
	}
	return t
}

// tableOptionColumns are the option columns system_schema.tables and
// .views share.
var tableOptionColumns = []string{
	"additional_write_policy text", "bloom_filter_fp_chance double", "caching frozen<map<text, text>>",
	"cdc boolean", "comment text", "compaction frozen<map<text, text>>", "compression frozen<map<text, text>>",
	"crc_check_chance double", "dclocal_read_repair_chance double", "default_time_to_live int",
	"extensions frozen<map<text, blob>>", "gc_grace_seconds int", "id uuid", "max_index_interval int",
	"memtable text", "memtable_flush_period_in_ms int", "min_index_interval int", "read_repair text",
	"read_repair_chance double", "speculative_retry text",
}

func withOptions(specs ...string) []string { return append(specs, tableOptionColumns...) }

// The system_schema tables, as Cassandra 4.1 defines them (drivers check
// the column types).
var (
	KeyspacesTable = systemTable(SystemSchemaKeyspace, "keyspaces", []string{"keyspace_name"}, nil,
		"keyspace_name text", "durable_writes boolean", "replication frozen<map<text, text>>")
	TablesTable = systemTable(SystemSchemaKeyspace, "tables", []string{"keyspace_name"}, []string{"table_name"},
		withOptions("keyspace_name text", "table_name text", "flags frozen<set<text>>")...)
	ColumnsTable = systemTable(SystemSchemaKeyspace, "columns", []string{"keyspace_name"}, []string{"table_name", "column_name"},
		"keyspace_name text", "table_name text", "column_name text", "clustering_order text",
		"column_name_bytes blob", "kind text", "position int", "type text")
	TypesTable = systemTable(SystemSchemaKeyspace, "types", []string{"keyspace_name"}, []string{"type_name"},
		"keyspace_name text", "type_name text", "field_names frozen<list<text>>", "field_types frozen<list<text>>")
	FunctionsTable = systemTable(SystemSchemaKeyspace, "functions", []string{"keyspace_name"}, []string{"function_name", "argument_types"},
		"keyspace_name text", "function_name text", "argument_types frozen<list<text>>", "argument_names frozen<list<text>>",
		"body text", "called_on_null_input boolean", "language text", "return_type text")
	AggregatesTable = systemTable(SystemSchemaKeyspace, "aggregates", []string{"keyspace_name"}, []string{"aggregate_name", "argument_types"},
		"keyspace_name text", "aggregate_name text", "argument_types frozen<list<text>>", "final_func text",
		"initcond text", "return_type text", "state_func text", "state_type text")
	ViewsTable = systemTable(SystemSchemaKeyspace, "views", []string{"keyspace_name"}, []string{"view_name"},
		withOptions("keyspace_name text", "view_name text", "base_table_id uuid", "base_table_name text",
			"include_all_columns boolean", "where_clause text")...)
	IndexesTable = systemTable(SystemSchemaKeyspace, "indexes", []string{"keyspace_name"}, []string{"table_name", "index_name"},
		"keyspace_name text", "table_name text", "index_name text", "kind text", "options frozen<map<text, text>>")
	TriggersTable = systemTable(SystemSchemaKeyspace, "triggers", []string{"keyspace_name"}, []string{"table_name", "trigger_name"},
		"keyspace_name text", "table_name text", "trigger_name text", "options frozen<map<text, text>>")
	DroppedColumnsTable = systemTable(SystemSchemaKeyspace, "dropped_columns", []string{"keyspace_name"}, []string{"table_name", "column_name"},
		"keyspace_name text", "table_name text", "column_name text", "dropped_time timestamp", "kind text", "type text")
)

// The system tables of the node's own state: those drivers read
// (system.local and the peers tables), the repair history, the Paxos
// state and the batchlog.
var (
	LocalTable = systemTable(SystemKeyspace, "local", []string{"key"}, nil,
		"key text", "bootstrapped text", "broadcast_address inet", "broadcast_port int", "cluster_name text",
		"cql_version text", "data_center text", "gossip_generation int", "host_id uuid", "listen_address inet",
		"listen_port int", "native_protocol_version text", "partitioner text", "rack text", "release_version text",
		"rpc_address inet", "rpc_port int", "schema_version uuid", "tokens set<text>", "truncated_at map<uuid, blob>")
	PeersTable = systemTable(SystemKeyspace, "peers", []string{"peer"}, nil,
		"peer inet", "data_center text", "host_id uuid", "preferred_ip inet", "rack text", "release_version text",
		"rpc_address inet", "schema_version uuid", "tokens set<text>")
	PeersV2Table = systemTable(SystemKeyspace, "peers_v2", []string{"peer"}, []string{"peer_port"},
		"peer inet", "peer_port int", "data_center text", "host_id uuid", "native_address inet", "native_port int",
		"preferred_ip inet", "preferred_port int", "rack text", "release_version text", "schema_version uuid",
		"tokens set<text>")
	// RepairHistoryTable is this node's record of where repairs made every
	// replica of a table agree (ScyllaDB keeps one of the kind): per
	// table, each stretch of tokens (range_start, range_end] and when the
	// last repair that covered it began.
	RepairHistoryTable = systemTable(SystemKeyspace, "repair_history", []string{"table_id"}, []string{"range_start"},
		"table_id uuid", "range_start text", "range_end text", "repaired_at timestamp", "keyspace_name text", "table_name text")
	// PaxosTable holds each replica's Paxos registers for the partitions
	// lightweight transactions touched, by partition key and table id, as
	// Cassandra 4.1 lays it out: the ballots promised to writes
	// (in_progress_ballot) and to reads (in_progress_read_ballot), the
	// proposal accepted and not yet committed, and the latest commit.
	PaxosTable = systemTable(SystemKeyspace, "paxos", []string{"row_key"}, []string{"cf_id"},
		"row_key blob", "cf_id uuid", "in_progress_ballot timeuuid", "in_progress_read_ballot timeuuid",
		"most_recent_commit blob", "most_recent_commit_at timeuuid", "most_recent_commit_version int",
		"proposal blob", "proposal_ballot timeuuid", "proposal_version int")
	// BatchesTable is the batchlog: the logged batches this node holds
	// until their writes are known to be in, by a timeuuid of when they
	// were made, as Cassandra 4.1 lays it out. Its deletions need no
	// grace: the table is this node's alone.
	BatchesTable = withoutGrace(systemTable(SystemKeyspace, "batches", []string{"id"}, nil,
		"id timeuuid", "mutations list<blob>", "version int"))
)

// withoutGrace sets a table's gc_grace_seconds to 0.
func withoutGrace(t *Table) *Table { return withGrace(t, 0) }

// withGrace sets a table's gc_grace_seconds.
func withGrace(t *Table, seconds int32) *Table {
	t.Options.GCGraceSeconds = seconds
	return t
}

// commented sets a table's comment.
func commented(t *Table, comment string) *Table {
	t.Options.Comment = comment
	return t
}

// authGrace is the system_auth tables' gc_grace_seconds, 90 days as
// Cassandra's.
const authGrace = 90 * 24 * 3600

// The system_auth tables, as Cassandra 4.1 lays them out. Every node
// holds all of them: their changes commit through the metadata log, as
// the schema's do.
var (
	RolesTable = withGrace(commented(systemTable(SystemAuthKeyspace, "roles", []string{"role"}, nil,
		"role text", "can_login boolean", "is_superuser boolean", "member_of set<text>", "salted_hash text"),
		"role definitions"), authGrace)
	RoleMembersTable = withGrace(commented(systemTable(SystemAuthKeyspace, "role_members", []string{"role"}, []string{"member"},
		"role text", "member text"), "role memberships lookup table"), authGrace)
	RolePermissionsTable = withGrace(commented(systemTable(SystemAuthKeyspace, "role_permissions", []string{"role"}, []string{"resource"},
		"role text", "resource text", "permissions set<text>"), "permissions granted to db roles"), authGrace)
	// The name's misspelling is Cassandra's.
	ResourceRolePermissionsIndexTable = withGrace(commented(systemTable(SystemAuthKeyspace, "resource_role_permissons_index", []string{"resource"}, []string{"role"},
		"resource text", "role text"), "index of db roles with permissions granted on a resource"), authGrace)
	NetworkPermissionsTable = withGrace(commented(systemTable(SystemAuthKeyspace, "network_permissions", []string{"role"}, nil,
		"role text", "dcs frozen<set<text>>"), "user network permissions"), authGrace)
)

// AuthTables are the system_auth tables.
func AuthTables() []*Table {
	return []*Table{RolesTable, RoleMembersTable, RolePermissionsTable, ResourceRolePermissionsIndexTable, NetworkPermissionsTable}
}

// ReplicatedMetadataTables are the tables whose changes commit through
// the metadata log and apply on every node: system_schema's and
// system_auth's. A snapshot of the log carries their contents.
func ReplicatedMetadataTables() []*Table { return append(SystemSchemaTables(), AuthTables()...) }

// The system_distributed and system_traces tables, as Cassandra 4.1 lays
// them out: drivers and tools look for them.
var (
	DistributedRepairHistoryTable = commented(systemTable(SystemDistributedKeyspace, "repair_history", []string{"keyspace_name", "columnfamily_name"}, []string{"id"},
		"keyspace_name text", "columnfamily_name text", "id timeuuid", "parent_id timeuuid", "range_begin text", "range_end text",
		"coordinator inet", "coordinator_port int", "participants set<inet>", "participants_v2 set<text>",
		"exception_message text", "exception_stacktrace text", "status text", "started_at timestamp", "finished_at timestamp"),
		"Repair history")
	ParentRepairHistoryTable = commented(systemTable(SystemDistributedKeyspace, "parent_repair_history", []string{"parent_id"}, nil,
		"parent_id timeuuid", "keyspace_name text", "columnfamily_names set<text>", "started_at timestamp", "finished_at timestamp",
		"exception_message text", "exception_stacktrace text", "requested_ranges set<text>", "successful_ranges set<text>",
		"options map<text, text>"), "Repair history")
	ViewBuildStatusTable = commented(systemTable(SystemDistributedKeyspace, "view_build_status", []string{"keyspace_name", "view_name"}, []string{"host_id"},
		"keyspace_name text", "view_name text", "host_id uuid", "status text"), "Materialized View build status")
	PartitionDenylistTable = commented(systemTable(SystemDistributedKeyspace, "partition_denylist", []string{"ks_name", "table_name"}, []string{"key"},
		"ks_name text", "table_name text", "key blob"), "Partition keys which have been denied access")
	TraceSessionsTable = commented(systemTable(SystemTracesKeyspace, "sessions", []string{"session_id"}, nil,
		"session_id uuid", "client inet", "command text", "coordinator inet", "coordinator_port int", "duration int",
		"parameters map<text, text>", "request text", "started_at timestamp"), "tracing sessions")
	TraceEventsTable = commented(systemTable(SystemTracesKeyspace, "events", []string{"session_id"}, []string{"event_id"},
		"session_id uuid", "event_id timeuuid", "activity text", "source inet", "source_elapsed int", "source_port int", "thread text"),
		"tracing events")
)

// schemaTables are the system_schema tables in the order a keyspace's
// definition is written to them.
var schemaTables = []*Table{KeyspacesTable, TablesTable, ColumnsTable, TypesTable, FunctionsTable,
	AggregatesTable, ViewsTable, IndexesTable, TriggersTable, DroppedColumnsTable}

// SystemSchemaTables are the system_schema tables, in the order a
// keyspace's definition is written to them.
func SystemSchemaTables() []*Table { return slices.Clone(schemaTables) }

// SystemKeyspaces returns the system keyspaces, as the schema lists them
// (drivers expect to find them in system_schema): system and
// system_schema, and system_auth, system_distributed and system_traces.
func SystemKeyspaces() []*Keyspace {
	local := localReplication
	sys := &Keyspace{Name: SystemKeyspace, Replication: local, DurableWrites: true, Tables: map[string]*Table{}, Types: map[string]*cqltype.Type{}}
	for _, t := range []*Table{LocalTable, PeersTable, PeersV2Table, RepairHistoryTable, PaxosTable, BatchesTable} {
		sys.Tables[t.Name] = t
	}
	ss := &Keyspace{Name: SystemSchemaKeyspace, Replication: local, DurableWrites: true, Tables: map[string]*Table{}, Types: map[string]*cqltype.Type{}}
	for _, t := range schemaTables {
		ss.Tables[t.Name] = t
	}
	out := []*Keyspace{sys, ss}
	for _, k := range []struct {
		name   string
		factor int
		tables []*Table
	}{
		{SystemAuthKeyspace, 1, AuthTables()},
		{SystemDistributedKeyspace, 3, []*Table{DistributedRepairHistoryTable, ParentRepairHistoryTable, ViewBuildStatusTable, PartitionDenylistTable}},
		{SystemTracesKeyspace, 2, []*Table{TraceSessionsTable, TraceEventsTable}},
	} {
		// The replication shown is Cassandra's; the node keeps these
		// tables itself (system_auth on every node, through the log).
		ks := &Keyspace{Name: k.name, Replication: Replication{Class: SimpleStrategy, Factor: k.factor}, DurableWrites: true,
			Tables: map[string]*Table{}, Types: map[string]*cqltype.Type{}}
		for _, t := range k.tables {
			ks.Tables[t.Name] = t
		}
		out = append(out, ks)
	}
	return out
}

// IsSystemKeyspace reports whether a keyspace is the node's own.
func IsSystemKeyspace(name string) bool {
	return name == SystemKeyspace || name == SystemSchemaKeyspace || name == "system_auth" ||
		name == "system_distributed" || name == "system_traces" || name == "system_views" || name == "system_virtual_schema"
}

// IsNodeLocal reports whether a keyspace's tables live on each node alone:
// the system keyspaces but system_traces, whose traces are placed and
// replicated by the ring as its replication says (SimpleStrategy, two
// replicas), so that a client reads a trace from any node.
func IsNodeLocal(name string) bool {
	return IsSystemKeyspace(name) && name != SystemTracesKeyspace
}

func (t *Table) String() string { return fmt.Sprintf("%s.%s", t.Keyspace, t.Name) }
