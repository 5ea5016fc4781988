package clients

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/sibyldb/sibyl/node"
	"github.com/sibyldb/sibyl/tools/nodetool"
)

// viewRow reads one row of a virtual table; nil when there is none.
func viewRow(t *testing.T, s *gocql.Session, query string, args ...any) map[string]any {
	t.Helper()
	row := map[string]any{}
	if err := s.Query(query, args...).MapScan(row); err != nil {
		if err == gocql.ErrNotFound {
			return nil
		}
		t.Fatalf("%s: %v", query, err)
	}
	return row
}

// tableView reads a per-table view's row of ks.t.
func tableView(t *testing.T, s *gocql.Session, view string) map[string]any {
	t.Helper()
	row := viewRow(t, s, "SELECT * FROM system_views."+view+" WHERE keyspace_name = 'ks' AND table_name = 't'")
	if row == nil {
		t.Fatalf("system_views.%s has no row for ks.t", view)
	}
	return row
}

// TestSystemViews reads each system_views table from a running node with
// gocql, and checks its values follow what the node did: requests raise
// the latency counts by exactly their number, reads count their rows and
// tombstones, a flush gives the table its disk usage, a running
// compaction shows in sstable_tasks, and the client itself is listed.
func TestSystemViews(t *testing.T) {
	cacheSize := node.Size(64 << 20)
	_, nativePort, adminPort := serveNode(t, node.Config{FileCacheSize: cacheSize, ClusterName: "views"})
	s := session(t, gocqlCluster(nativePort))
	mustExec(t, s, createKeyspace, "CREATE TABLE ks.t (k int, c int, v text, PRIMARY KEY (k, c))")
	nodetoolRun := func(args ...string) {
		t.Helper()
		var out strings.Builder
		if code := nodetool.Run(append([]string{"-h", "127.0.0.1", "-p", strconv.Itoa(adminPort)}, args...), &out, &out); code != 0 {
			t.Fatalf("nodetool %v: %s", args, out.String())
		}
	}
	count := func(view string) int64 { return tableView(t, s, view)["count"].(int64) }

	t.Run("local and coordinator write latency", func(t *testing.T) {
		local, coord := count("local_write_latency"), count("coordinator_write_latency")
		const writes = 12
		for i := range writes {
			mustExec(t, s, fmt.Sprintf("INSERT INTO ks.t (k, c, v) VALUES (%d, %d, 'value')", i%3, i))
		}
		if got := count("local_write_latency") - local; got != writes {
			t.Errorf("local_write_latency rose by %d, want %d", got, writes)
		}
		if got := count("coordinator_write_latency") - coord; got != writes {
			t.Errorf("coordinator_write_latency rose by %d, want %d", got, writes)
		}
		row := tableView(t, s, "local_write_latency")
		if row["max_ms"].(float64) <= 0 || row["p50th_ms"].(float64) > row["max_ms"].(float64) || row["per_second"].(float64) <= 0 {
			t.Errorf("local_write_latency figures %v", row)
		}
	})

	t.Run("local and coordinator read latency, rows and tombstones per read", func(t *testing.T) {
		local, coord, rows, tombstones := count("local_read_latency"), count("coordinator_read_latency"), count("rows_per_read"), count("tombstones_per_read")
		const reads = 7
		for range reads {
			if err := s.Query("SELECT v FROM ks.t WHERE k = 0").Exec(); err != nil {
				t.Fatal(err)
			}
		}
		if got := count("local_read_latency") - local; got != reads {
			t.Errorf("local_read_latency rose by %d, want %d", got, reads)
		}
		if got := count("coordinator_read_latency") - coord; got != reads {
			t.Errorf("coordinator_read_latency rose by %d, want %d", got, reads)
		}
		if got := count("rows_per_read") - rows; got != reads {
			t.Errorf("rows_per_read rose by %d, want %d", got, reads)
		}
		// Partition 0 holds 4 rows: every read of it read 4.
		if row := tableView(t, s, "rows_per_read"); row["max"].(float64) != 4 || row["p50th"].(float64) != 4 {
			t.Errorf("rows_per_read %v, want 4 rows a read", row)
		}
		mustExec(t, s, "DELETE FROM ks.t WHERE k = 1 AND c = 1")
		if err := s.Query("SELECT v FROM ks.t WHERE k = 1").Exec(); err != nil {
			t.Fatal(err)
		}
		if got := count("tombstones_per_read") - tombstones; got != reads+1 {
			t.Errorf("tombstones_per_read rose by %d, want %d", got, reads+1)
		}
		if row := tableView(t, s, "tombstones_per_read"); row["max"].(float64) < 1 {
			t.Errorf("tombstones_per_read %v: the read of a deleted row counted none", row)
		}
	})

	t.Run("local and coordinator scan latency", func(t *testing.T) {
		local, coord := count("local_scan_latency"), count("coordinator_scan_latency")
		if err := s.Query("SELECT * FROM ks.t").Exec(); err != nil {
			t.Fatal(err)
		}
		if got := count("local_scan_latency") - local; got != 1 {
			t.Errorf("local_scan_latency rose by %d, want 1", got)
		}
		if got := count("coordinator_scan_latency") - coord; got != 1 {
			t.Errorf("coordinator_scan_latency rose by %d, want 1", got)
		}
	})

	t.Run("disk usage and max partition size", func(t *testing.T) {
		if got := tableView(t, s, "disk_usage")["mebibytes"].(int64); got != 0 {
			t.Errorf("disk_usage before a flush: %d MiB", got)
		}
		if got := tableView(t, s, "max_partition_size")["mebibytes"].(int64); got != 0 {
			t.Errorf("max_partition_size before a flush: %d MiB", got)
		}
		nodetoolRun("flush", "ks", "t")
		// A few hundred bytes, rounded up to a mebibyte, as Cassandra shows.
		if got := tableView(t, s, "disk_usage")["mebibytes"].(int64); got != 1 {
			t.Errorf("disk_usage after a flush: %d MiB, want 1", got)
		}
		if got := tableView(t, s, "max_partition_size")["mebibytes"].(int64); got != 1 {
			t.Errorf("max_partition_size after a flush: %d MiB, want 1", got)
		}
	})

	t.Run("caches", func(t *testing.T) {
		row := viewRow(t, s, "SELECT * FROM system_views.caches WHERE name = 'chunks'")
		if row == nil {
			t.Fatal("no chunks cache")
		}
		if row["capacity_bytes"].(int64) != int64(cacheSize) {
			t.Errorf("chunks capacity %v, want file_cache_size %d", row["capacity_bytes"], cacheSize)
		}
		before := row["request_count"].(int64)
		// The table is flushed: its reads go through the block cache.
		for range 3 {
			if err := s.Query("SELECT v FROM ks.t WHERE k = 2").Exec(); err != nil {
				t.Fatal(err)
			}
		}
		row = viewRow(t, s, "SELECT * FROM system_views.caches WHERE name = 'chunks'")
		if row["request_count"].(int64) <= before || row["hit_count"].(int64) <= 0 || row["hit_count"].(int64) > row["request_count"].(int64) {
			t.Errorf("chunks after reads of an SSTable: %v (requests before %d)", row, before)
		}
		if r := row["hit_ratio"].(float64); r <= 0 || r > 1 || row["size_bytes"].(int64) <= 0 || row["entry_count"].(int) <= 0 {
			t.Errorf("chunks figures %v", row)
		}
	})

	t.Run("thread pools", func(t *testing.T) {
		completed := func() int64 {
			return viewRow(t, s, "SELECT completed_tasks FROM system_views.thread_pools WHERE name = 'Native-Transport-Requests'")["completed_tasks"].(int64)
		}
		first := completed()
		second := completed()
		if second <= first {
			t.Errorf("Native-Transport-Requests completed %d then %d: the first read did not count", first, second)
		}
		row := viewRow(t, s, "SELECT * FROM system_views.thread_pools WHERE name = 'CompactionExecutor'")
		if row == nil || row["active_tasks_limit"].(int) != 2 {
			t.Errorf("CompactionExecutor %v, want a limit of 2", row)
		}
		var names []string
		iter := s.Query("SELECT name FROM system_views.thread_pools").Iter()
		for name := ""; iter.Scan(&name); {
			names = append(names, name)
		}
		if err := iter.Close(); err != nil {
			t.Fatal(err)
		}
		if !slices.IsSorted(names) || !slices.Contains(names, "ReadStage") || !slices.Contains(names, "MutationStage") {
			t.Errorf("thread pools %v", names)
		}
	})

	t.Run("clients", func(t *testing.T) {
		clients := func() []map[string]any {
			var all []map[string]any
			iter := s.Query("SELECT * FROM system_views.clients").Iter()
			for row := map[string]any{}; iter.MapScan(row); row = map[string]any{} {
				all = append(all, row)
			}
			if err := iter.Close(); err != nil {
				t.Fatal(err)
			}
			return all
		}
		before := clients()
		// A second session adds its connections (gocql opens a control
		// connection and one to the node).
		other := session(t, gocqlCluster(nativePort))
		if err := other.Query("SELECT * FROM system.local").Exec(); err != nil {
			t.Fatal(err)
		}
		after := clients()
		if len(before) == 0 || len(after) <= len(before) {
			t.Fatalf("%d clients, then %d after a second session connected", len(before), len(after))
		}
		for _, c := range after {
			if c["connection_stage"] == "established" {
				continue // a connection gocql is opening: no STARTUP yet
			}
			opts := c["client_options"].(map[string]string)
			if c["address"].(string) != "127.0.0.1" || c["connection_stage"] != "ready" || c["ssl_enabled"] != false ||
				c["protocol_version"].(int) != 4 || c["request_count"].(int64) <= 0 || c["username"] != "" ||
				opts["CQL_VERSION"] != "3.0.0" || c["driver_name"] != opts["DRIVER_NAME"] || c["hostname"] != "127.0.0.1" {
				t.Errorf("client row %v", c)
			}
		}
	})

	t.Run("settings", func(t *testing.T) {
		row := viewRow(t, s, "SELECT value FROM system_views.settings WHERE name = 'cluster_name'")
		if row == nil || row["value"] != "views" {
			t.Errorf("cluster_name setting %v", row)
		}
		row = viewRow(t, s, "SELECT value FROM system_views.settings WHERE name = 'native_transport_port'")
		if row == nil || row["value"] != strconv.Itoa(nativePort) {
			t.Errorf("native_transport_port setting %v, want %d", row, nativePort)
		}
		row = viewRow(t, s, "SELECT value FROM system_views.settings WHERE name = 'file_cache_size'")
		if row == nil || row["value"] != "64MiB" {
			t.Errorf("file_cache_size setting %v", row)
		}
		if row := viewRow(t, s, "SELECT value FROM system_views.settings WHERE name = 'client_encryption_options.enabled'"); row == nil || row["value"] != "false" {
			t.Errorf("client_encryption_options.enabled setting %v", row)
		}
		// Pages of 7 give the same rows as one read, ordered by name, and
		// no password.
		read := func(pageSize int) []string {
			var names []string
			iter := s.Query("SELECT name FROM system_views.settings").PageSize(pageSize).Iter()
			for name := ""; iter.Scan(&name); {
				names = append(names, name)
			}
			if err := iter.Close(); err != nil {
				t.Fatal(err)
			}
			return names
		}
		whole, paged := read(5000), read(7)
		if len(whole) < 40 || !slices.Equal(whole, paged) || !slices.IsSorted(whole) {
			t.Errorf("settings: %d names in one page, %d in pages of 7, sorted %v", len(whole), len(paged), slices.IsSorted(whole))
		}
		for _, name := range whole {
			if strings.Contains(name, "password") {
				t.Errorf("setting %s shows a password", name)
			}
		}
	})

	t.Run("sstable tasks", func(t *testing.T) {
		if row := viewRow(t, s, "SELECT * FROM system_views.sstable_tasks"); row != nil {
			t.Fatalf("a task before any compaction: %v", row)
		}
		// A few MiB in two SSTables, compacted at 1 MiB/s: a compaction
		// that runs for seconds.
		mustExec(t, s, "CREATE TABLE ks.big (k int PRIMARY KEY, v text)")
		random := rand.New(rand.NewPCG(1, 2))
		for round := range 2 {
			for i := range 1500 {
				value := make([]byte, 768)
				for j := range value {
					value[j] = byte(32 + random.IntN(95))
				}
				if err := s.Query("INSERT INTO ks.big (k, v) VALUES (?, ?)", round*1500+i, string(value)).Exec(); err != nil {
					t.Fatal(err)
				}
			}
			nodetoolRun("flush", "ks", "big")
		}
		nodetoolRun("setcompactionthroughput", "1")
		done := make(chan struct{})
		go func() {
			defer close(done)
			var out strings.Builder
			nodetool.Run([]string{"-h", "127.0.0.1", "-p", strconv.Itoa(adminPort), "compact", "ks", "big"}, &out, &out)
		}()
		var task map[string]any
		for deadline := time.Now().Add(20 * time.Second); task == nil && time.Now().Before(deadline); {
			task = viewRow(t, s, "SELECT * FROM system_views.sstable_tasks WHERE keyspace_name = 'ks'")
			time.Sleep(20 * time.Millisecond)
		}
		// nodetool compactionstats lists it too, while it runs.
		var stats strings.Builder
		nodetool.Run([]string{"-h", "127.0.0.1", "-p", strconv.Itoa(adminPort), "compactionstats"}, &stats, &stats)
		nodetoolRun("setcompactionthroughput", "0")
		<-done
		if task != nil && !regexp.MustCompile(`^pending tasks: \d+\n(- ks\.big: \d+\n)?\nid +compaction type +keyspace +table +completed +total +unit +progress *\n`+
			`[0-9a-f-]{36} +Compaction +ks +big +\d+ +\d+ +bytes +\d+\.\d\d% *\nActive compaction remaining time :  +\dh\d\dm\d\ds\n$`).MatchString(stats.String()) {
			t.Errorf("compactionstats while compacting:\n%s", stats.String())
		}
		if task == nil {
			t.Fatal("the compaction never showed in sstable_tasks")
		}
		if task["table_name"] != "big" || task["kind"] != "compaction" || task["unit"] != "bytes" || task["sstables"].(int) != 2 ||
			task["total"].(int64) < 1<<20 || task["progress"].(int64) > task["total"].(int64) {
			t.Errorf("task %v", task)
		}
		if r := task["completion_ratio"].(float64); r < 0 || r > 1 {
			t.Errorf("completion ratio %v", r)
		}
		if id := task["task_id"].(gocql.UUID); id.Version() != 1 || time.Since(id.Time()) > time.Minute {
			t.Errorf("task id %v is not a time uuid of now", id)
		}
		if row := viewRow(t, s, "SELECT * FROM system_views.sstable_tasks"); row != nil {
			t.Errorf("a finished compaction still listed: %v", row)
		}
		if got := metric(t, adminPort, "sibyl_compaction_completed_total"); got < 1 {
			t.Errorf("compactions completed %v", got)
		}
		if got := metric(t, adminPort, "sibyl_compaction_bytes_compacted_total"); got < float64(task["total"].(int64))/2 {
			t.Errorf("bytes compacted %v, of inputs of %v", got, task["total"])
		}
	})

	t.Run("pending hints", func(t *testing.T) {
		if row := viewRow(t, s, "SELECT * FROM system_views.pending_hints"); row != nil {
			t.Errorf("a node alone holds hints: %v", row)
		}
	})
}

// TestVirtualSchemaAndRefusals checks system_virtual_schema describes the
// virtual tables (and system_schema does not), DESCRIBE prints them as
// Cassandra 4.1 does, and every kind of write is refused with Cassandra's
// message.
func TestVirtualSchemaAndRefusals(t *testing.T) {
	_, nativePort, _ := serveNode(t, node.Config{})
	s := session(t, gocqlCluster(nativePort))
	mustExec(t, s, createKeyspace, "CREATE TABLE ks.t (k int PRIMARY KEY, v int)")

	var keyspaces []string
	iter := s.Query("SELECT keyspace_name FROM system_virtual_schema.keyspaces").Iter()
	for ks := ""; iter.Scan(&ks); {
		keyspaces = append(keyspaces, ks)
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(keyspaces) != "[system_views system_virtual_schema]" {
		t.Errorf("virtual keyspaces %v", keyspaces)
	}
	row := viewRow(t, s, "SELECT kind, position, type, clustering_order FROM system_virtual_schema.columns WHERE keyspace_name = 'system_views' AND table_name = 'clients' AND column_name = 'port'")
	if row == nil || row["kind"] != "clustering" || row["position"].(int) != 0 || row["type"] != "int" || row["clustering_order"] != "asc" {
		t.Errorf("system_views.clients.port described as %v", row)
	}
	if row := viewRow(t, s, "SELECT comment FROM system_virtual_schema.tables WHERE keyspace_name = 'system_views' AND table_name = 'settings'"); row == nil || row["comment"] != "current settings" {
		t.Errorf("system_views.settings described as %v", row)
	}
	if row := viewRow(t, s, "SELECT * FROM system_schema.keyspaces WHERE keyspace_name = 'system_views'"); row != nil {
		t.Errorf("system_schema lists a virtual keyspace: %v", row)
	}

	var create string
	if err := s.Query("DESCRIBE TABLE system_views.settings").Scan(new(string), new(string), new(string), &create); err != nil {
		t.Fatal(err)
	}
	const wantCreate = "/*\nWarning: Table system_views.settings is a virtual table and cannot be recreated with CQL.\n" +
		"Structure, for reference:\nVIRTUAL TABLE system_views.settings (\n    name text PRIMARY KEY,\n    value text\n" +
		") WITH comment = 'current settings';\n*/"
	if create != wantCreate {
		t.Errorf("DESCRIBE TABLE system_views.settings:\n%s\nwant:\n%s", create, wantCreate)
	}
	if err := s.Query("DESCRIBE KEYSPACE system_views").Scan(new(string), new(string), new(string), &create); err != nil {
		t.Fatal(err)
	}
	if want := "/*\nWarning: Keyspace system_views is a virtual keyspace and cannot be recreated with CQL.\nStructure, for reference:\nVIRTUAL KEYSPACE system_views;\n*/"; create != want {
		t.Errorf("DESCRIBE KEYSPACE system_views:\n%s", create)
	}

	for _, c := range []struct{ stmt, code, message string }{
		{"INSERT INTO system_views.settings (name, value) VALUES ('a', 'b')", "2200", "Modification is not supported by table system_views.settings"},
		{"UPDATE system_views.settings SET value = 'b' WHERE name = 'a'", "2200", "Modification is not supported by table system_views.settings"},
		{"DELETE FROM system_views.clients WHERE address = '127.0.0.1'", "2200", "Modification is not supported by table system_views.clients"},
		{"INSERT INTO system_views.settings (name, value) VALUES ('a', 'b') USING TTL 10", "2200", "Expiring columns are not supported by virtual tables"},
		{"UPDATE system_views.settings USING TIMESTAMP 5 SET value = 'b' WHERE name = 'a'", "2200", "Custom timestamp is not supported by virtual tables"},
		{"INSERT INTO system_views.settings (name, value) VALUES ('a', 'b') IF NOT EXISTS", "2200", "Conditional updates are not supported by virtual tables"},
		{"TRUNCATE system_views.caches", "2200", "Truncation is not supported by table system_views.caches"},
		{"BEGIN BATCH INSERT INTO system_views.settings (name, value) VALUES ('a', 'b'); APPLY BATCH", "2200", "Cannot include a virtual table statement in a logged batch"},
		{"BEGIN UNLOGGED BATCH INSERT INTO system_views.settings (name, value) VALUES ('a', 'b'); INSERT INTO ks.t (k, v) VALUES (1, 1); APPLY BATCH", "2200", "Mutations for virtual and regular tables cannot exist in the same batch"},
		{"BEGIN UNLOGGED BATCH INSERT INTO system_views.settings (name, value) VALUES ('a', 'b'); APPLY BATCH", "2200", "Modification is not supported by table system_views.settings"},
		{"CREATE TABLE system_views.mine (k int PRIMARY KEY)", "2100", "system_views keyspace is not user-modifiable."},
		{"DROP TABLE system_views.settings", "2100", "system_views keyspace is not user-modifiable."},
		{"DROP KEYSPACE system_virtual_schema", "2100", "system_virtual_schema keyspace is not user-modifiable."},
	} {
		err := s.Query(c.stmt).Exec()
		re, ok := err.(gocql.RequestError)
		if !ok || fmt.Sprintf("%x", re.Code()) != c.code || re.Message() != c.message {
			t.Errorf("%s: %v, want %s %q", c.stmt, err, c.code, c.message)
		}
	}
	// A protocol BATCH message meets the same rules.
	for kind, want := range map[gocql.BatchType]string{
		gocql.LoggedBatch:   "Cannot include a virtual table statement in a logged batch",
		gocql.UnloggedBatch: "Mutations for virtual and regular tables cannot exist in the same batch",
	} {
		b := s.NewBatch(kind)
		b.Query("INSERT INTO system_views.settings (name, value) VALUES ('a', 'b')")
		b.Query("INSERT INTO ks.t (k, v) VALUES (1, 1)")
		if err := s.ExecuteBatch(b); err == nil || err.Error() != want {
			t.Errorf("a BATCH message of kind %v: %v, want %q", kind, err, want)
		}
	}
	// The batches that mixed a virtual table in wrote nothing.
	if row := viewRow(t, s, "SELECT v FROM ks.t WHERE k = 1"); row != nil {
		t.Errorf("a refused batch wrote %v", row)
	}
}

// TestDashboardIsServed checks the admin API serves the dashboard page,
// its style and script from the binary, and the state it polls.
func TestDashboardIsServed(t *testing.T) {
	_, _, adminPort := serveNode(t, node.Config{})
	get := func(path string) (string, string) {
		t.Helper()
		resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(adminPort) + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d, %v", path, resp.StatusCode, err)
		}
		return string(body), resp.Header.Get("Content-Type")
	}
	page, kind := get("/")
	if !strings.HasPrefix(kind, "text/html") || !strings.Contains(page, `<svg id="ring"`) || !strings.Contains(page, `src="/dashboard/dashboard.js"`) {
		t.Errorf("/ is %s: %.200s", kind, page)
	}
	if script, kind := get("/dashboard/dashboard.js"); !strings.Contains(kind, "javascript") || !strings.Contains(script, `fetch("/dashboard/state"`) {
		t.Errorf("the script is %s: %.200s", kind, script)
	}
	if _, kind := get("/dashboard/dashboard.css"); !strings.HasPrefix(kind, "text/css") {
		t.Errorf("the style is %s", kind)
	}
	state, _ := get("/dashboard/state")
	var st struct {
		Self  string `json:"self"`
		Nodes []struct {
			Address, Status string
		} `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(state), &st); err != nil || st.Self != "127.0.0.1" || len(st.Nodes) != 1 || st.Nodes[0].Status != "UP" {
		t.Errorf("state %s: %v", state, err)
	}
}
