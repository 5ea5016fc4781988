package node

import (
	"fmt"
	"github.com/sibyldb/sibyl/internal/testutil"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sibyldb/sibyl/cql/exec"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/schema"
	"github.com/sibyldb/sibyl/storage"
)

func TestOpenCreatesTheDataLayoutAndReopens(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 2; i++ {
		n, err := Open(Config{DataDir: dir})
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		if err := n.Close(); err != nil {
			t.Fatalf("close %d: %v", i, err)
		}
	}
	for _, sub := range []string{"data", "commitlog"} {
		if st, err := os.Stat(filepath.Join(dir, sub)); err != nil || !st.IsDir() {
			t.Fatalf("%s/ missing after start-up: %v", sub, err)
		}
	}
}

func TestBadSettingIsRefusedByName(t *testing.T) {
	_, err := Open(Config{DataDir: t.TempDir(), CommitLogSync: "sometimes"})
	if err == nil || !strings.Contains(err.Error(), "commitlog_sync") {
		t.Fatalf("Open = %v, want an error naming commitlog_sync", err)
	}
}

// TestRestartKeepsSchemaAndRows creates a keyspace and a table, writes a
// row, restarts the node, and finds all three: the schema from the
// system_schema SSTables, the row replayed from the commit log into the
// table opened before replay.
func TestRestartKeepsSchemaAndRows(t *testing.T) {
	dir := t.TempDir()
	n, err := Open(Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ks := schema.NewKeyspace("shop", schema.Replication{Class: schema.SimpleStrategy, Factor: 1}, true)
	opts := schema.DefaultTableParams()
	opts.Compaction = map[string]string{"class": "LeveledCompactionStrategy", "sstable_size_in_mb": "10"}
	kv, err := schema.NewTable("shop", "kv", mutation.TableID{0x4b, 0x56}, []*schema.Column{
		{Name: "k", Type: cqltype.BigintType, Kind: schema.PartitionKey},
		{Name: "v", Type: cqltype.TextType, Kind: schema.Regular, Position: -1},
	}, opts)
	if err != nil {
		t.Fatal(err)
	}
	w := &schema.CellWriter{Timestamp: 1, Now: time.Now().Unix()}
	ksm, err := schema.KeyspaceMutation(ks, w)
	if err != nil {
		t.Fatal(err)
	}
	tms, err := schema.TableMutations(kv, w)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.ApplySchema(n.Schema(), append([]*mutation.Mutation{ksm}, tms...)); err != nil {
		t.Fatal(err)
	}
	row, err := kv.InsertMutation(map[string][]byte{"k": cqltype.EncodeBigint(7), "v": []byte("seven")}, w)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.engine.Apply(row); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}

	n, err = Open(Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	got, err := n.Schema().Table("shop", "kv")
	if err != nil {
		t.Fatalf("after restart: %v", err)
	}
	if got.Options.Compaction["class"] != schema.LeveledClass {
		t.Fatalf("compaction after restart: %v", got.Options.Compaction)
	}
	rows, err := n.readRows(got)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || string(rows[0]["v"].Value) != "seven" {
		t.Fatalf("rows after restart: %+v", rows)
	}
}

// TestStorageTableOptions checks that a table's compaction and
// tombstone_gc reach the engine as the schema read them.
func TestStorageTableOptions(t *testing.T) {
	opts := schema.DefaultTableParams()
	opts.GCGraceSeconds = 0
	opts.Compaction = map[string]string{"class": "TimeWindowCompactionStrategy",
		"compaction_window_unit": "HOURS", "compaction_window_size": "6", "timestamp_resolution": "MILLISECONDS", "enabled": "false"}
	tbl, err := schema.NewTable("ks", "t", mutation.TableID{1}, []*schema.Column{{Name: "k", Type: cqltype.IntType, Kind: schema.PartitionKey}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	o := StorageTableOptions(schema.NewKeyspace("ks", schema.Replication{Class: schema.SimpleStrategy, Factor: 3}, true), tbl)
	c := o.Compaction
	if c.Strategy != storage.TimeWindow || c.Window != 6*time.Hour || c.TimestampUnit != time.Millisecond || !c.Disabled ||
		c.MinThreshold != 4 || c.MaxThreshold != 32 || o.GCGraceSeconds != storage.NoGCGrace {
		t.Fatalf("storage options %+v", o)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if o.TombstoneGC != (storage.TombstoneGC{}) {
		t.Fatalf("a table without tombstone_gc gets %+v", o.TombstoneGC)
	}
	three := schema.NewKeyspace("ks", schema.Replication{Class: schema.SimpleStrategy, Factor: 3}, true)
	one := schema.NewKeyspace("ks", schema.Replication{Class: schema.NetworkTopologyStrategy, DataCenters: map[string]int{"dc1": 1}}, true)
	for _, c := range []struct {
		gc   schema.TombstoneGC
		ks   *schema.Keyspace
		want storage.TombstoneGC
	}{
		{schema.TombstoneGC{Mode: schema.TombstoneGCRepair, PropagationDelaySeconds: 60}, three, storage.TombstoneGC{Mode: storage.GCAfterRepair, PropagationDelay: 60}},
		{schema.TombstoneGC{Mode: schema.TombstoneGCRepair, PropagationDelaySeconds: 60}, one, storage.TombstoneGC{Mode: storage.GCImmediately}},
		{schema.TombstoneGC{Mode: schema.TombstoneGCDisabled}, three, storage.TombstoneGC{Mode: storage.GCNever}},
		{schema.TombstoneGC{Mode: schema.TombstoneGCImmediate}, three, storage.TombstoneGC{Mode: storage.GCImmediately}},
	} {
		p := tbl.Options
		p.SetTombstoneGC(c.gc)
		withGC := *tbl
		withGC.Options = p
		if got := StorageTableOptions(c.ks, &withGC).TombstoneGC; got != c.want {
			t.Errorf("tombstone_gc %+v in %v: engine gets %+v, want %+v", c.gc, c.ks.Replication, got, c.want)
		}
	}
}

// TestCQLSurvivesRestart runs CQL through a session against the node,
// restarts it, and reads the rows back with CQL.
func TestCQLSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	run := func(n *Node, stmts string) []*exec.Result {
		t.Helper()
		out, err := exec.NewSession(n).Run(stmts)
		if err != nil {
			t.Fatalf("after %d statements: %v", len(out), err)
		}
		return out
	}
	n, err := Open(Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	run(n, `CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
		CREATE TYPE shop.address (street text, zip int);
		CREATE TABLE shop.people (id int, name text, home frozen<address>, tags set<text>, PRIMARY KEY (id));
		INSERT INTO shop.people (id, name, home, tags) VALUES (1, 'ann', {street: 'main', zip: 1}, {'a', 'b'});
		INSERT INTO shop.people (id, name) VALUES (2, 'bob')`)
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	n, err = Open(Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	res := run(n, `SELECT name, tags FROM shop.people WHERE id = 1; SELECT id FROM shop.people`)
	if got := res[0].Rows; len(got) != 1 || string(got[0][0]) != "ann" ||
		res[0].Columns[1].Type.Format(got[0][1]) != "{'a', 'b'}" {
		t.Fatalf("after restart, id 1 reads %q", got)
	}
	if len(res[1].Rows) != 2 {
		t.Fatalf("after restart the table has %d rows, want 2", len(res[1].Rows))
	}
}

// TestSystemLocal reads system.local as drivers do: the row is there with
// the fields they need, its schema_version follows schema changes, and the
// host id and tokens survive a restart.
func TestSystemLocal(t *testing.T) {
	dir := t.TempDir()
	local := func(n *Node) map[string][]byte {
		t.Helper()
		res, err := exec.NewSession(n).Run(`SELECT * FROM system.local WHERE key = 'local'`)
		if err != nil {
			t.Fatal(err)
		}
		if len(res[0].Rows) != 1 {
			t.Fatalf("system.local has %d rows", len(res[0].Rows))
		}
		out := map[string][]byte{}
		for i, c := range res[0].Columns {
			out[c.Name] = res[0].Rows[0][i]
		}
		return out
	}
	n, err := Open(Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	first := local(n)
	for col, want := range map[string]string{"release_version": ReleaseVersion, "cql_version": CQLVersion,
		"partitioner": partitioner.Murmur3Name, "cluster_name": "Test Cluster", "data_center": "datacenter1", "rack": "rack1",
		"bootstrapped": "COMPLETED", "native_protocol_version": NativeProtocolVersion} {
		if got := string(first[col]); got != want {
			t.Errorf("%s = %q, want %q", col, got, want)
		}
	}
	if v := n.Schema().Version(); string(first["schema_version"]) != string(v[:]) {
		t.Errorf("schema_version %x, the schema's is %x", first["schema_version"], v)
	}
	if _, err := exec.NewSession(n).Run(`CREATE KEYSPACE k WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`); err != nil {
		t.Fatal(err)
	}
	after := local(n)
	if v := n.Schema().Version(); string(after["schema_version"]) != string(v[:]) || string(after["schema_version"]) == string(first["schema_version"]) {
		t.Errorf("schema_version did not follow the change: %x then %x", first["schema_version"], after["schema_version"])
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	n, err = Open(Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	again := local(n)
	for _, col := range []string{"host_id", "tokens", "schema_version"} {
		if string(again[col]) != string(after[col]) {
			t.Errorf("%s changed across a restart: %x then %x", col, after[col], again[col])
		}
	}
}

// freePort is a port free on every address of a three-node test
// cluster.
func freePort(t *testing.T) int { return testutil.ClusterPort(t, 3) }

// openNode opens a node on a fresh directory, closed when the test ends,
// and a session on it.
func openNode(t *testing.T) (*Node, *exec.Session) {
	t.Helper()
	n, err := Open(Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n, exec.NewSession(n)
}

// TestTokenRangeScan checks token() bounds become the engine's key bounds.
func TestTokenRangeScan(t *testing.T) {
	_, s := openNode(t)
	script := `CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
		CREATE TABLE ks.tk (k int PRIMARY KEY, v int);`
	for k := 1; k <= 5; k++ {
		script += fmt.Sprintf("INSERT INTO ks.tk (k, v) VALUES (%d, %d);", k, k)
	}
	if _, err := s.Run(script); err != nil {
		t.Fatal(err)
	}
	// Under Murmur3 the int keys 1..5 order by token as 5, 1, 2, 4, 3.
	res, err := s.Run(`SELECT k FROM ks.tk WHERE token(k) > -4069959284402364209 AND token(k) <= -2729420104000364805`)
	if err != nil {
		t.Fatal(err)
	}
	var got []int32
	for _, row := range res[0].Rows {
		v, _ := cqltype.DecodeInt(row[0])
		got = append(got, v)
	}
	if fmt.Sprint(got) != "[2 4]" {
		t.Fatalf("token range read %v, want [2 4]", got)
	}
}

// TestPagedScanMatchesUnpaged pages a scan over the engine, with rows in
// memtables and SSTables and deletions of every kind, and checks the pages
// put together are the unpaged read: a page ending inside a partition
// resumes with the partition's deletions still applied.
func TestPagedScanMatchesUnpaged(t *testing.T) {
	n, s := openNode(t)
	script := `CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
		CREATE TABLE ks.t (k int, c int, s int static, v int, PRIMARY KEY (k, c));`
	for k := 0; k < 12; k++ {
		for c := 0; c < 6; c++ {
			script += fmt.Sprintf("INSERT INTO ks.t (k, c, v) VALUES (%d, %d, %d);", k, c, k*10+c)
		}
	}
	if _, err := s.Run(script); err != nil {
		t.Fatal(err)
	}
	if err := n.engine.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(`DELETE FROM ks.t WHERE k = 3;
		DELETE FROM ks.t WHERE k = 4 AND c > 1 AND c < 4;
		DELETE FROM ks.t WHERE k = 5 AND c = 0;
		UPDATE ks.t SET s = 7 WHERE k = 40;
		INSERT INTO ks.t (k, c, v) VALUES (6, 9, 69)`); err != nil {
		t.Fatal(err)
	}
	read := func(size int) (rows []string, pages int) {
		var state []byte
		for {
			res, err := s.QueryText("SELECT k, c, s, v FROM ks.t", exec.QueryParams{PageSize: size, PagingState: state})
			if err != nil {
				t.Fatal(err)
			}
			pages++
			for _, r := range res.Rows {
				rows = append(rows, fmt.Sprintf("%x", r))
			}
			if state = res.PagingState; state == nil {
				return rows, pages
			}
		}
	}
	whole, _ := read(0)
	if len(whole) != 12*6-6-2-1+1+1 {
		t.Fatalf("the unpaged scan read %d rows", len(whole))
	}
	for _, size := range []int{1, 2, 5, 7, 100} {
		got, pages := read(size)
		if fmt.Sprint(got) != fmt.Sprint(whole) {
			t.Fatalf("pages of %d: %v\nwant %v", size, got, whole)
		}
		if want := max((len(whole)+size-1)/size, 1); pages != want {
			t.Errorf("pages of %d: %d pages, want %d", size, pages, want)
		}
	}
}

func TestConfigFile(t *testing.T) {
	dir := t.TempDir()
	write := func(text string) string {
		p := filepath.Join(dir, "sibyl.yaml")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cfg, err := LoadConfigFile(write(`cluster_name: Prod
listen_address: 127.0.0.2
native_transport_port: 19999
commitlog_sync: batch
commitlog_sync_period: 2500ms
native_transport_max_frame_size: 32MiB
file_cache_size: 128MiB
memtable_heap_space: 2GiB
num_tokens: 4
partitioner: RandomPartitioner
data_file_directories: [/srv/sibyl/data]
write_request_timeout: 500ms
read_request_timeout: 3s
auto_repair:
  enabled: true
  min_repair_interval: 6h
`))
	if err != nil {
		t.Fatal(err)
	}
	cfg.EnsureDefaults()
	if cfg.ClusterName != "Prod" || cfg.RPCAddress != "127.0.0.2" || cfg.NativePort != 19999 ||
		time.Duration(cfg.CommitLogSyncPeriod) != 2500*time.Millisecond || cfg.NativeMaxFrameSize != 32<<20 ||
		cfg.FileCacheSize != 128<<20 || cfg.MemtableHeapSpace != 2<<30 ||
		cfg.NumTokens != 4 || cfg.DataFileDirectories[0] != "/srv/sibyl/data" || cfg.CommitLogDirectory != "data/commitlog" ||
		time.Duration(cfg.WriteRequestTimeout) != 500*time.Millisecond || time.Duration(cfg.ReadRequestTimeout) != 3*time.Second ||
		time.Duration(cfg.RangeRequestTimeout) != 10*time.Second || time.Duration(cfg.TruncateRequestTimeout) != time.Minute ||
		!cfg.AutoRepair.Enabled || time.Duration(cfg.AutoRepair.MinRepairInterval) != 6*time.Hour ||
		time.Duration(cfg.AutoRepair.RepairCheckInterval) != 5*time.Minute {
		t.Errorf("loaded %+v", cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("valid configuration refused: %v", err)
	}
	if empty, err := LoadConfigFile(write("")); err != nil || empty.ClusterName != "" {
		t.Errorf("an empty file: %+v, %v", empty, err)
	}
	for text, want := range map[string]string{
		"cluster_nam: x\n":                        "field cluster_nam not found",
		"commitlog_sync_period: soon\n":           `"soon" is not a duration`,
		"native_transport_max_frame_size: 1 TB\n": `"1 TB" is not a data size`,
		"file_cache_size: lots\n":                 `"lots" is not a data size`,
		"native_transport_port: [1]\n":            "cannot unmarshal",
		"auto_repair:\n  every: 1h\n":             "field every not found",
	} {
		_, err := LoadConfigFile(write(text))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error containing %q", text, err, want)
		}
	}
	bad := Config{Partitioner: "ByteOrderedPartitioner", NumTokens: -1, RPCAddress: "here", DataFileDirectories: []string{"a", "b"},
		ReadRequestTimeout: Duration(-time.Second), AutoRepair: AutoRepair{MinRepairInterval: Duration(-time.Hour)}}
	err = bad.Validate()
	for _, want := range []string{"partitioner:", "num_tokens: -1", `rpc_address: "here"`, "data_file_directories: 2 directories",
		"read_request_timeout: -1s is negative", "auto_repair.min_repair_interval: -1h0m0s is negative"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v, want %q named", err, want)
		}
	}
}

// TestTokensAndPartitioner checks num_tokens and the partitioner reach
// system.local, and that a node refuses to start with another
// partitioner than its data was written with.
func TestTokensAndPartitioner(t *testing.T) {
	dir := t.TempDir()
	n, err := Open(Config{DataDir: dir, Partitioner: "RandomPartitioner", NumTokens: 8})
	if err != nil {
		t.Fatal(err)
	}
	res, err := exec.NewSession(n).Run("SELECT partitioner, tokens FROM system.local")
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res[0].Rows[0][0]); got != partitioner.RandomName {
		t.Errorf("partitioner %q", got)
	}
	tokens, _ := cqltype.DecodeCollection(res[0].Rows[0][1])
	if len(tokens) != 8 {
		t.Errorf("%d tokens, want 8", len(tokens))
	}
	for _, tok := range tokens {
		if _, err := partitioner.Random().ParseToken(string(tok)); err != nil {
			t.Errorf("token %s: %v", tok, err)
		}
	}
	// A first node spaces its tokens evenly: each range an eighth.
	m := n.ring.Load()
	for i := range m.SortedTokens() {
		r := m.RangeOf(i)
		f := partitioner.Random().RingFraction(r.End) - partitioner.Random().RingFraction(r.Start)
		if f < 0 {
			f++
		}
		if math.Abs(f-1.0/8) > 1e-9 {
			t.Errorf("range %v is %v of the ring, want an eighth", r, f)
		}
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(Config{DataDir: dir}); err == nil || !strings.Contains(err.Error(), "a node keeps the partitioner its data was written with") {
		t.Fatalf("restart with Murmur3: %v", err)
	}
}

// TestDropRemovesFiles: a dropped table's SSTables leave the disk (a
// snapshot taken before stays), and so do a dropped keyspace's.
func TestDropRemovesFiles(t *testing.T) {
	n, s := openNode(t)
	if _, err := s.Run("CREATE KEYSPACE d WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};" +
		"CREATE TABLE d.gone (k int PRIMARY KEY); CREATE TABLE d.kept (k int PRIMARY KEY);" +
		"INSERT INTO d.gone (k) VALUES (1); INSERT INTO d.kept (k) VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	if err := n.engine.Flush(); err != nil {
		t.Fatal(err)
	}
	ksDir := filepath.Join(n.cfg.DataFileDirectories[0], "d")
	dirs := func() []string {
		entries, _ := os.ReadDir(ksDir)
		var out []string
		for _, e := range entries {
			out = append(out, strings.SplitN(e.Name(), "-", 2)[0])
		}
		return out
	}
	if got := fmt.Sprint(dirs()); got != "[gone kept]" {
		t.Fatalf("table directories %s", got)
	}
	kept, _ := n.Schema().Table("d", "kept")
	st, _ := n.storageTable(kept)
	if err := st.Snapshot("before", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run("DROP TABLE d.gone"); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(dirs()); got != "[kept]" {
		t.Errorf("after DROP TABLE: %s", got)
	}
	if _, err := s.Run("DROP KEYSPACE d"); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Join(ksDir, fmt.Sprintf("kept-%x", kept.ID[:])))
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if fmt.Sprint(left) != "[snapshots]" {
		t.Errorf("after DROP KEYSPACE the kept table's directory holds %v, want its snapshots alone", left)
	}
}
