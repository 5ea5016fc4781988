package schema

import (
	"bytes"
	"maps"
	"slices"

	"github.com/sibyldb/sibyl/cqltype"
)

// The virtual keyspaces: their tables hold nothing; each read builds
// their rows from the node's live state (package virtual). They are not
// in system_schema, never replicated, and not writable.
const (
	VirtualSchemaKeyspace = "system_virtual_schema"
	ViewsKeyspace         = "system_views"
)

// IsVirtualKeyspace reports whether a keyspace's tables are virtual.
func IsVirtualKeyspace(name string) bool {
	return name == VirtualSchemaKeyspace || name == ViewsKeyspace
}

// virtualTable is systemTable for a virtual table: its comment is given
// (Cassandra leaves some empty).
func virtualTable(keyspace, name, comment string, partitionKey, clustering []string, specs ...string) *Table {
	return commented(systemTable(keyspace, name, partitionKey, clustering, specs...), comment)
}

// The tables of system_virtual_schema: the virtual keyspaces described as
// system_schema describes the others (drivers read them for their
// metadata of virtual tables).
var (
	VirtualKeyspacesTable = virtualTable(VirtualSchemaKeyspace, "keyspaces", "virtual keyspace definitions",
		[]string{"keyspace_name"}, nil, "keyspace_name text")
	VirtualTablesTable = virtualTable(VirtualSchemaKeyspace, "tables", "virtual table definitions",
		[]string{"keyspace_name"}, []string{"table_name"}, "keyspace_name text", "table_name text", "comment text")
	VirtualColumnsTable = virtualTable(VirtualSchemaKeyspace, "columns", "virtual column definitions",
		[]string{"keyspace_name"}, []string{"table_name", "column_name"},
		"keyspace_name text", "table_name text", "column_name text", "clustering_order text",
		"column_name_bytes blob", "kind text", "position int", "type text")
)

// latencyView is one of system_views' latency tables: a table's latency
// distribution in milliseconds, and its rate.
func latencyView(name string) *Table {
	return virtualTable(ViewsKeyspace, name, "", []string{"keyspace_name", "table_name"}, nil,
		"keyspace_name text", "table_name text", "count bigint", "max_ms double", "p50th_ms double",
		"p99th_ms double", "per_second double")
}

// histogramView is one of system_views' per-read count tables.
func histogramView(name string) *Table {
	return virtualTable(ViewsKeyspace, name, "", []string{"keyspace_name", "table_name"}, nil,
		"keyspace_name text", "table_name text", "count bigint", "max double", "p50th double", "p99th double")
}

// storageView is one of system_views' table size tables, in mebibytes.
func storageView(name string) *Table {
	return virtualTable(ViewsKeyspace, name, "", []string{"keyspace_name", "table_name"}, nil,
		"keyspace_name text", "table_name text", "mebibytes bigint")
}

// The tables of system_views, as Cassandra 4.1 lays them out.
var (
	CachesView = virtualTable(ViewsKeyspace, "caches", "system caches", []string{"name"}, nil,
		"name text", "capacity_bytes bigint", "entry_count int", "hit_count bigint", "hit_ratio double",
		"recent_hit_rate_per_second bigint", "recent_request_rate_per_second bigint", "request_count bigint", "size_bytes bigint")
	ClientsView = virtualTable(ViewsKeyspace, "clients", "currently connected clients", []string{"address"}, []string{"port"},
		"address inet", "port int", "client_options frozen<map<text, text>>", "connection_stage text", "driver_name text",
		"driver_version text", "hostname text", "protocol_version int", "request_count bigint", "ssl_cipher_suite text",
		"ssl_enabled boolean", "ssl_protocol text", "username text")
	SettingsView = virtualTable(ViewsKeyspace, "settings", "current settings", []string{"name"}, nil,
		"name text", "value text")
	SSTableTasksView = virtualTable(ViewsKeyspace, "sstable_tasks", "current sstable tasks", []string{"keyspace_name"}, []string{"table_name", "task_id"},
		"keyspace_name text", "table_name text", "task_id timeuuid", "completion_ratio double", "kind text",
		"progress bigint", "sstables int", "total bigint", "unit text")
	ThreadPoolsView = virtualTable(ViewsKeyspace, "thread_pools", "", []string{"name"}, nil,
		"name text", "active_tasks int", "active_tasks_limit int", "blocked_tasks bigint", "blocked_tasks_all_time bigint",
		"completed_tasks bigint", "pending_tasks int")
	PendingHintsView = virtualTable(ViewsKeyspace, "pending_hints", "Pending hints that this node has for other nodes", []string{"host_id"}, nil,
		"host_id uuid", "address inet", "dc text", "files int", "newest timestamp", "oldest timestamp", "port int", "rack text", "status text")
	LocalReadLatencyView        = latencyView("local_read_latency")
	LocalScanLatencyView        = latencyView("local_scan_latency")
	LocalWriteLatencyView       = latencyView("local_write_latency")
	CoordinatorReadLatencyView  = latencyView("coordinator_read_latency")
	CoordinatorScanLatencyView  = latencyView("coordinator_scan_latency")
	CoordinatorWriteLatencyView = latencyView("coordinator_write_latency")
	TombstonesPerReadView       = histogramView("tombstones_per_read")
	RowsPerReadView             = histogramView("rows_per_read")
	DiskUsageView               = storageView("disk_usage")
	MaxPartitionSizeView        = storageView("max_partition_size")
)

// virtualKeyspaces are the virtual keyspaces by name.
var virtualKeyspaces = func() map[string]*Keyspace {
	out := map[string]*Keyspace{}
	for name, tables := range map[string][]*Table{
		VirtualSchemaKeyspace: {VirtualKeyspacesTable, VirtualTablesTable, VirtualColumnsTable},
		ViewsKeyspace: {CachesView, ClientsView, SettingsView, SSTableTasksView, ThreadPoolsView, PendingHintsView,
			LocalReadLatencyView, LocalScanLatencyView, LocalWriteLatencyView, CoordinatorReadLatencyView,
			CoordinatorScanLatencyView, CoordinatorWriteLatencyView, TombstonesPerReadView, RowsPerReadView,
			DiskUsageView, MaxPartitionSizeView},
	} {
		ks := &Keyspace{Name: name, Replication: localReplication, DurableWrites: true,
			Tables: map[string]*Table{}, Types: map[string]*cqltype.Type{}}
		for _, t := range tables {
			ks.Tables[t.Name] = t
		}
		out[name] = ks
	}
	return out
}()

// VirtualKeyspaces returns the virtual keyspaces, by name. A Schema finds
// them by name (Keyspace, Table) but does not list them with the others
// (Keyspaces): nothing stores, streams or repairs them.
func VirtualKeyspaces() []*Keyspace {
	names := slices.Sorted(maps.Keys(virtualKeyspaces))
	out := make([]*Keyspace, len(names))
	for i, n := range names {
		out[i] = virtualKeyspaces[n]
	}
	return out
}

// CompareVirtualKeys orders a virtual table's partitions as its reads
// return them: by key, each component's bytes in turn (text by its
// UTF-8 bytes, inet by address), as Cassandra orders a virtual table by
// its key rather than by token.
func CompareVirtualKeys(t *Table, a, b []byte) int {
	ca, errA := t.SplitPartitionKey(a)
	cb, errB := t.SplitPartitionKey(b)
	if errA != nil || errB != nil {
		return bytes.Compare(a, b)
	}
	for i := range min(len(ca), len(cb)) {
		if c := bytes.Compare(ca[i], cb[i]); c != 0 {
			return c
		}
	}
	return len(ca) - len(cb)
}
