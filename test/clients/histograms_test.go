package clients

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/rs/zerolog"
	"github.com/sibyldb/sibyl/internal/testutil"
	"github.com/sibyldb/sibyl/node"
	"github.com/sibyldb/sibyl/tools/nodetool"
)

// TestLatencyHistograms: the reads and writes of a table raise the
// coordinator's and the table's latency counts on /metrics, and nodetool
// proxyhistograms and tablehistograms show their percentiles in
// Cassandra's layout; the partition sizes and cell counts come from the
// SSTables once the table is flushed.
func TestLatencyHistograms(t *testing.T) {
	n, nativePort, adminPort := serveNode(t, node.Config{})
	s := session(t, gocqlCluster(nativePort))
	mustExec(t, s, createKeyspace, "CREATE TABLE ks.t (k int, c int, v text, PRIMARY KEY (k, c))")
	run := func(args ...string) (string, int) {
		var out, errs strings.Builder
		code := nodetool.Run(append([]string{"-h", "127.0.0.1", "-p", strconv.Itoa(adminPort)}, args...), &out, &errs)
		return out.String() + errs.String(), code
	}
	const writes, reads = 40, 25
	for i := range writes {
		if err := s.Query("INSERT INTO ks.t (k, c, v) VALUES (?, ?, 'value')", i%10, i).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	for i := range reads {
		if err := s.Query("SELECT v FROM ks.t WHERE k = ?", i%10).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	table := `{keyspace="ks",table="t"}`
	if got := metric(t, adminPort, "sibyl_table_write_latency_seconds_count"+table); got != writes {
		t.Errorf("table write latency count %v, want %d", got, writes)
	}
	if got := metric(t, adminPort, "sibyl_table_read_latency_seconds_count"+table); got != reads {
		t.Errorf("table read latency count %v, want %d", got, reads)
	}
	if got := metric(t, adminPort, "sibyl_table_live_rows_per_read_sum"+table); got != reads*4 {
		t.Errorf("live rows read %v, want %d", got, reads*4)
	}
	if got := metric(t, adminPort, `sibyl_client_request_latency_seconds_count{request="Read"}`); got < reads {
		t.Errorf("coordinator read latency count %v, want at least %d", got, reads)
	}
	if got := metric(t, adminPort, `sibyl_table_read_latency_seconds_bucket{keyspace="ks",table="t",le="+Inf"}`); got != reads {
		t.Errorf("+Inf bucket %v", got)
	}
	if got := metric(t, adminPort, "sibyl_table_memtable_bytes"+table); got <= 0 {
		t.Errorf("memtable bytes %v", got)
	}
	if got := metric(t, adminPort, "sibyl_table_live_sstables"+table); got != 0 {
		t.Errorf("SSTables before a flush %v", got)
	}
	// A read at THREE on one node is Unavailable, counted by its level.
	if err := s.Query("SELECT v FROM ks.t WHERE k = 1").Consistency(gocql.Three).Exec(); err == nil {
		t.Fatal("a read at THREE on one node was served")
	}
	if got := metric(t, adminPort, `sibyl_coordinator_failures_total{consistency="THREE",error="unavailable"}`); got != 1 {
		t.Errorf("unavailables at THREE %v", got)
	}
	if got := metric(t, adminPort, `sibyl_coordinator_failures_total{consistency="QUORUM",error="unavailable"}`); got != 0 {
		t.Errorf("unavailables at QUORUM %v", got)
	}

	out, code := run("proxyhistograms")
	lines := strings.Split(out, "\n")
	if code != 0 || len(lines) != 12 || lines[0] != "proxy histograms" ||
		lines[1] != "Percentile       Read Latency      Write Latency      Range Latency   CAS Read Latency  CAS Write Latency View Write Latency" ||
		lines[2] != "                     (micros)           (micros)           (micros)           (micros)           (micros)           (micros)" ||
		lines[10] != "" || lines[11] != "" {
		t.Fatalf("proxyhistograms (%d):\n%s", code, out)
	}
	row := regexp.MustCompile(`^(50%|75%|95%|98%|99%|Min|Max) +([0-9]+\.[0-9]{2}) +([0-9]+\.[0-9]{2}) +([0-9]+\.[0-9]{2}) +0\.00 +0\.00 +0\.00$`)
	for i, label := range []string{"50%", "75%", "95%", "98%", "99%", "Min", "Max"} {
		m := row.FindStringSubmatch(lines[3+i])
		if m == nil || m[1] != label || len(lines[3+i]) != 10+6*19 {
			t.Fatalf("proxyhistograms row %q", lines[3+i])
		}
		if read, _ := strconv.ParseFloat(m[2], 64); read <= 0 {
			t.Errorf("%s read latency %v", label, read)
		}
	}

	out, _ = run("tablehistograms", "ks.t")
	if !strings.HasPrefix(out, "No SSTables exists, unable to calculate 'Partition Size' and 'Cell Count' percentiles\nks/t histograms\n"+
		"Percentile      Read Latency     Write Latency          SSTables    Partition Size        Cell Count\n"+
		"                    (micros)          (micros)                             (bytes)                  \n") ||
		!regexp.MustCompile(`(?m)^50% +[1-9][0-9]*\.[0-9]{2} +[1-9][0-9]*\.[0-9]{2} +0\.00 +NaN +NaN$`).MatchString(out) {
		t.Errorf("tablehistograms before a flush:\n%s", out)
	}
	if err := n.Engine().Flush(); err != nil {
		t.Fatal(err)
	}
	for i := range reads {
		if err := s.Query("SELECT v FROM ks.t WHERE k = ?", i%10).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	if got := metric(t, adminPort, "sibyl_table_live_sstables"+table); got != 1 {
		t.Errorf("SSTables after a flush %v", got)
	}
	if got := metric(t, adminPort, "sibyl_table_live_disk_space_used_bytes"+table); got <= 0 {
		t.Errorf("live disk space after a flush %v", got)
	}
	// The SSTable's ten partitions, of four cells each.
	if got := metric(t, adminPort, "sibyl_table_partition_size_bytes_count"+table); got != 10 {
		t.Errorf("partition sizes counted %v, want 10", got)
	}
	if got := metric(t, adminPort, `sibyl_table_cell_count_bucket{keyspace="ks",table="t",le="10"}`); got != 10 {
		t.Errorf("partitions of at most 10 cells %v, want 10", got)
	}
	if got := metric(t, adminPort, `sibyl_table_cell_count_bucket{keyspace="ks",table="t",le="1"}`); got != 0 {
		t.Errorf("partitions of at most 1 cell %v, want 0", got)
	}
	// The coordinator's latencies of the table: every write, and every
	// read so far (those before the flush and after).
	if got := metric(t, adminPort, "sibyl_table_coordinator_write_latency_seconds_count"+table); got != writes {
		t.Errorf("coordinator write latency count %v, want %d", got, writes)
	}
	if got := metric(t, adminPort, "sibyl_table_coordinator_read_latency_seconds_count"+table); got != 2*reads+1 {
		t.Errorf("coordinator read latency count %v, want %d", got, 2*reads+1)
	}
	// Ten partitions of four rows of one cell each; the reads before the
	// flush merged no SSTable, those after one.
	out, _ = run("tablehistograms", "ks", "t")
	if strings.Contains(out, "No SSTables") || !regexp.MustCompile(`(?m)^Max +[0-9.]+ +[0-9.]+ +1\.00 +[1-9][0-9]* +4$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^Min +[0-9.]+ +[0-9.]+ +0\.00 +[1-9][0-9]* +4$`).MatchString(out) {
		t.Errorf("tablehistograms after a flush:\n%s", out)
	}
	if out, code := run("tablehistograms", "ks.nope"); code != 1 || !strings.HasPrefix(out, "nodetool: Unknown table ks.nope\n") {
		t.Errorf("tablehistograms ks.nope (%d): %q", code, out)
	}
	if out, code := run("tablehistograms", "ks"); code != 1 || !strings.HasPrefix(out, "nodetool: tablehistograms requires keyspace and table name arguments\n") {
		t.Errorf("tablehistograms ks (%d): %q", code, out)
	}
	// tpstats: the client requests answered, in nodetool's table layout.
	out, code = run("tpstats")
	tp := strings.Split(out, "\n")
	native := regexp.MustCompile(`^Native-Transport-Requests +0 +0 +([0-9]+) +0 +0 *$`)
	var completed int
	for _, l := range tp {
		if m := native.FindStringSubmatch(l); m != nil {
			completed, _ = strconv.Atoi(m[1])
		}
	}
	if code != 0 || tp[0] != "Pool Name                 Active Pending Completed Blocked All time blocked" ||
		!strings.Contains(out, "\nLatencies waiting in queue (micros) per dropped message types\nMessage type Dropped     50%      95%      99%      Max\n") ||
		completed < writes+2*reads {
		t.Errorf("tpstats (%d), %d requests completed:\n%s", code, completed, out)
	}
	if out, code := run("cfhistograms"); code != 0 || !strings.Contains(out, "ks/t histograms\n") || !strings.Contains(out, "system_schema/tables histograms\n") {
		t.Errorf("cfhistograms of every table (%d):\n%.500s", code, out)
	}
}

// TestGrafanaDashboardQueriesExist: every metric the Grafana dashboard in
// contrib/ queries is one a node serves, once it has served requests.
func TestGrafanaDashboardQueriesExist(t *testing.T) {
	raw, err := os.ReadFile("../../contrib/grafana/sibyl-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatal(err)
	}
	// A node of a cluster (of itself): hints and the metadata log are a
	// cluster's.
	cfg := node.Config{ListenAddress: "127.0.0.1", Seeds: []string{"127.0.0.1"}, GossipPort: testutil.FreePort(t), StoragePort: testutil.FreePort(t)}
	_, nativePort, adminPort := serveNode(t, cfg)
	s := session(t, gocqlCluster(nativePort))
	mustExec(t, s, createKeyspace, "CREATE TABLE ks.t (k int PRIMARY KEY, v int)", "INSERT INTO ks.t (k, v) VALUES (1, 1)",
		"SELECT v FROM ks.t WHERE k = 1", "SELECT v FROM ks.t")
	resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(adminPort) + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	served, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile(`\b(sibyl|go)_[a-z_]+\b`)
	queried := 0
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q queries nothing", p.Title)
		}
		for _, target := range p.Targets {
			for _, m := range name.FindAllString(target.Expr, -1) {
				queried++
				if !regexp.MustCompile(`(?m)^` + m + `[{ ]`).Match(served) {
					t.Errorf("panel %q queries %s, which the node does not serve", p.Title, m)
				}
			}
		}
	}
	if queried < 20 {
		t.Errorf("only %d metrics queried", queried)
	}
}

// TestBinaryAndGossipStatus: nodetool statusbinary and statusgossip, and
// disablebinary then enablebinary against a running node: clients are
// refused while it is off and served once it is back; a drained node
// refuses to start it.
func TestBinaryAndGossipStatus(t *testing.T) {
	n, nativePort, adminPort := serveNode(t, node.Config{})
	run := func(args ...string) (string, int) {
		var out, errs strings.Builder
		code := nodetool.Run(append([]string{"-h", "127.0.0.1", "-p", strconv.Itoa(adminPort)}, args...), &out, &errs)
		return out.String() + errs.String(), code
	}
	for _, c := range []string{"statusbinary", "statusgossip"} {
		if out, code := run(c); code != 0 || out != "running\n" {
			t.Errorf("%s (%d): %q", c, code, out)
		}
	}
	if out, code := run("disablebinary"); code != 0 || out != "" {
		t.Fatalf("disablebinary (%d): %q", code, out)
	}
	if out, _ := run("statusbinary"); out != "not running\n" {
		t.Errorf("statusbinary after disablebinary: %q", out)
	}
	if out, _ := run("info"); !strings.Contains(out, "Native Transport active: false\n") || !strings.Contains(out, "Gossip active          : true\n") {
		t.Errorf("info after disablebinary:\n%s", out)
	}
	// disablegossip and enablegossip, on a node alone.
	if out, code := run("disablegossip"); code != 0 || out != "" {
		t.Fatalf("disablegossip (%d): %q", code, out)
	}
	if out, _ := run("statusgossip"); out != "not running\n" {
		t.Errorf("statusgossip after disablegossip: %q", out)
	}
	if out, _ := run("info"); !strings.Contains(out, "Gossip active          : false\n") {
		t.Errorf("info after disablegossip:\n%s", out)
	}
	if out, code := run("enablegossip"); code != 0 || out != "" {
		t.Fatalf("enablegossip (%d): %q", code, out)
	}
	if out, _ := run("statusgossip"); out != "running\n" {
		t.Errorf("statusgossip after enablegossip: %q", out)
	}
	cluster := gocqlCluster(nativePort)
	cluster.ConnectTimeout, cluster.Timeout = time.Second, time.Second
	if s, err := cluster.CreateSession(); err == nil {
		s.Close()
		t.Fatal("a client connected while the native transport was off")
	}
	if out, code := run("enablebinary"); code != 0 || out != "" {
		t.Fatalf("enablebinary (%d): %q", code, out)
	}
	if out, _ := run("enablebinary"); out != "" {
		t.Errorf("enablebinary when running: %q", out)
	}
	s := session(t, gocqlCluster(nativePort))
	mustExec(t, s, createKeyspace)
	if out, _ := run("statusbinary"); out != "running\n" {
		t.Errorf("statusbinary after enablebinary: %q", out)
	}
	if err := n.Drain(); err != nil {
		t.Fatal(err)
	}
	if out, code := run("enablebinary"); code == 0 || !strings.Contains(out, "Unable to start native transport because the node was drained.") {
		t.Errorf("enablebinary after a drain (%d): %q", code, out)
	}
}

// TestLoggingLevels: nodetool getlogginglevels shows the node's logger as
// logback's ROOT, setlogginglevel changes what it logs at once, and with
// no arguments goes back to the level the node started with; an unknown
// logger or level is refused.
func TestLoggingLevels(t *testing.T) {
	before := zerolog.GlobalLevel()
	t.Cleanup(func() { zerolog.SetGlobalLevel(before) })
	var logs syncBuffer
	logger := zerolog.New(&logs)
	_, _, adminPort := serveNode(t, node.Config{Logger: &logger})
	run := func(args ...string) (string, int) {
		var out, errs strings.Builder
		code := nodetool.Run(append([]string{"-h", "127.0.0.1", "-p", strconv.Itoa(adminPort)}, args...), &out, &errs)
		return out.String() + errs.String(), code
	}
	table := func(level string) string {
		return "\nLogger Name                                        Log Level\nROOT" + strings.Repeat(" ", 56-len(level)) + level + "\n"
	}
	if out, code := run("getlogginglevels"); code != 0 || out != table(map[zerolog.Level]string{zerolog.TraceLevel: "TRACE", zerolog.InfoLevel: "INFO", zerolog.DebugLevel: "DEBUG"}[before]) {
		t.Errorf("getlogginglevels (%d): %q", code, out)
	}
	if out, code := run("setlogginglevel", "org.apache.cassandra", "warn"); code != 0 || out != "" {
		t.Fatalf("setlogginglevel (%d): %q", code, out)
	}
	if out, _ := run("getlogginglevels"); out != table("WARN") {
		t.Errorf("after setlogginglevel WARN: %q", out)
	}
	// An INFO line (a slow query, or the level's own change) is no longer
	// written; a warning is.
	logs.mu.Lock()
	logs.b.Reset()
	logs.mu.Unlock()
	logger.Info().Msg("quiet")
	logger.Warn().Msg("loud")
	if got := logs.String(); strings.Contains(got, "quiet") || !strings.Contains(got, "loud") {
		t.Errorf("at WARN the log holds %q", got)
	}
	for _, bad := range [][]string{{"org.apache.cassandra.db", "DEBUG"}, {"ROOT", "VERBOSE"}} {
		if out, code := run(append([]string{"setlogginglevel"}, bad...)...); code == 0 || !strings.Contains(out, "nodetool: ") {
			t.Errorf("setlogginglevel %v (%d): %q", bad, code, out)
		}
	}
	if _, code := run("setlogginglevel"); code != 0 || zerolog.GlobalLevel() != before {
		t.Errorf("setlogginglevel with no arguments (%d): level %v, want %v", code, zerolog.GlobalLevel(), before)
	}
}
