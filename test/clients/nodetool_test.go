package clients

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/sibyldb/sibyl/internal/testutil"
	"github.com/sibyldb/sibyl/node"
	"github.com/sibyldb/sibyl/tools/nodetool"
)

// TestNodetool runs every nodetool command against a node's admin API
// and checks the fields of what it prints.
func TestNodetool(t *testing.T) {
	adminPort, nativePort := testutil.FreePort(t), testutil.FreePort(t)
	dir := t.TempDir()
	n, err := node.Open(node.Config{DataDir: dir, AdminPort: adminPort, NativePort: nativePort})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if _, err := n.StartAdmin(); err != nil {
		t.Fatal(err)
	}
	if _, err := n.StartNative(); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, string, int) {
		var out, errs bytes.Buffer
		code := nodetool.Run(append([]string{"-h", "127.0.0.1", "-p", strconv.Itoa(adminPort)}, args...), &out, &errs)
		return out.String(), errs.String(), code
	}
	cluster := gocqlCluster(nativePort)
	s := session(t, cluster)
	mustExec(t, s, createKeyspace, "CREATE TABLE ks.t (k int PRIMARY KEY, v text)")
	for k := 0; k < 10; k++ {
		if err := s.Query("INSERT INTO ks.t (k, v) VALUES (?, ?)", k, "v").Exec(); err != nil {
			t.Fatal(err)
		}
	}

	out, _, code := run("status")
	if code != 0 || !regexp.MustCompile(`(?m)^UN  127\.0\.0\.1  [0-9.]+ (bytes|KiB|MiB)  16      100\.0%  +[0-9a-f-]{36}  rack1`).MatchString(out) ||
		!strings.HasPrefix(out, "Datacenter: datacenter1\n=======================\nStatus=Up/Down\n|/ State=Normal/Leaving/Joining/Moving\n--  Address") {
		t.Errorf("status (%d):\n%s", code, out)
	}
	if out, _, code := run("status", "nope"); code != 1 || out != "\nError: The keyspace nope, does not exist\n" {
		t.Errorf("status nope (%d): %q", code, out)
	}
	out, _, _ = run("info")
	for _, want := range []string{"ID                     : ", "Native Transport active: true", "Data Center            : datacenter1",
		"Token                  : (invoke with -T/--tokens to see all 16 tokens)"} {
		if !strings.Contains(out, want) {
			t.Errorf("info lacks %q:\n%s", want, out)
		}
	}
	// The caches, in Cassandra's lines: the block cache is the chunk cache
	// (file_cache_size, 512 MiB by default); Sibyl keeps no other.
	if !strings.Contains(out, "\nKey Cache              : entries 0, size 0 bytes, capacity 0 bytes, 0 hits, 0 requests, NaN recent hit rate, 0 save period in seconds\n") ||
		!regexp.MustCompile(`\nChunk Cache            : entries \d+, size [0-9.]+ (bytes|KiB|MiB), capacity 512 MiB, \d+ misses, \d+ requests, (NaN|[01]\.\d{3}) recent hit rate, NaN microseconds miss latency\n`).MatchString(out) {
		t.Errorf("info's caches:\n%s", out)
	}
	if out, _, _ := run("ring"); strings.Count(out, "127.0.0.1       rack1       Up     Normal") != 16 || !strings.HasSuffix(out, "\n  ") {
		t.Errorf("ring:\n%q", out)
	}
	if out, _, _ := run("describering", "ks"); strings.Count(out, "\tTokenRange(start_token:") != 16 || !strings.HasPrefix(out, "Schema Version:") {
		t.Errorf("describering:\n%s", out)
	}
	if out, _, _ := run("describering", "ks"); !strings.Contains(out, "endpoint_details:[EndpointDetails(host:127.0.0.1, datacenter:datacenter1, rack:rack1)])") {
		t.Errorf("describering's endpoint details:\n%s", out)
	}
	if out, _, code := run("gossipinfo"); code != 0 || !regexp.MustCompile(`^/127\.0\.0\.1:7000\n  generation:\d+\n  heartbeat:0\n  STATUS:1:NORMAL,-?\d+\n  LOAD:2:\d+\.\d\n  SCHEMA:3:[0-9a-f-]{36}\n  DC:4:datacenter1\n  RACK:5:rack1\n`).MatchString(out) ||
		!strings.Contains(out, "  TOKENS:10:<hidden>\n") || !strings.Contains(out, "  NATIVE_ADDRESS_AND_PORT:13:127.0.0.1:"+strconv.Itoa(nativePort)+"\n") {
		t.Errorf("gossipinfo (%d):\n%s", code, out)
	}
	if out, _, code := run("describecluster"); code != 0 || !regexp.MustCompile(`(?s)^Cluster Information:\n\tName: Test Cluster\n.*\tSchema versions:\n\t\t[0-9a-f-]{36}: \[127\.0\.0\.1\]\n.*\tLive: 1\n.*\tks -> Replication class: SimpleStrategy \{replication_factor=1\}\n.*Cluster Metadata Service:\n\tMembers: 127\.0\.0\.1\n\tLearners: \n\tLeader: 127\.0\.0\.1\n\tThis node: leader\n\tEpoch: \d+\n\tSchema epoch: \d+\n.*\tPartitioned: false`).MatchString(out) {
		t.Errorf("describecluster (%d):\n%s", code, out)
	}
	if out, _, code := run("cms", "describe"); code != 0 || !strings.HasPrefix(out, "Cluster Metadata Service:\n\tMembers: 127.0.0.1\n") {
		t.Errorf("cms describe (%d):\n%s", code, out)
	}
	if out, _, code := run("cms", "reconfigure"); code != 1 || !strings.Contains(out, "unknown subcommand") {
		t.Errorf("cms reconfigure (%d):\n%s", code, out)
	}
	if _, errs, code := run("describering", "system"); code != 2 || !strings.HasPrefix(errs, "error: There is no ring for the keyspace: system") {
		t.Errorf("describering system (%d): %q", code, errs)
	}
	if out, _, code := run("getendpoints", "ks", "t", "3"); code != 0 || out != "127.0.0.1\n" {
		t.Errorf("getendpoints (%d): %q", code, out)
	}
	if out, _, code := run("getendpoints", "nope", "t", "3"); code != 1 || !strings.HasPrefix(out, "nodetool: Unknown keyspace 'nope'\n") {
		t.Errorf("getendpoints nope (%d): %q", code, out)
	}
	if _, _, code := run("flush", "ks", "t"); code != 0 {
		t.Errorf("flush: %d", code)
	}
	if out, _, code := run("flush", "nope"); code != 1 || !strings.HasPrefix(out, "nodetool: Keyspace [nope] does not exist.\n") {
		t.Errorf("flush nope (%d): %q", code, out)
	}
	if _, errs, code := run("flush", "ks", "nope"); code != 2 || !strings.HasPrefix(errs, "error: Unknown keyspace/cf pair (ks.nope)") {
		t.Errorf("flush ks nope (%d): %q", code, errs)
	}
	out, _, _ = run("tablestats", "ks.t")
	for _, want := range []string{"Keyspace : ks\n", "\tWrite Count: 10\n", "\t\tTable: t\n", "\t\tSSTable count: 1\n",
		"\t\tNumber of partitions (estimate): 10\n", "\t\tLocal write count: 10\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("tablestats lacks %q:\n%s", want, out)
		}
	}
	if out, _, code := run("tablestats", "nope"); code != 1 || !strings.HasPrefix(out, "nodetool: Unknown keyspace: nope\n") {
		t.Errorf("tablestats nope (%d): %q", code, out)
	}
	if _, _, code := run("compact", "ks"); code != 0 {
		t.Errorf("compact: %d", code)
	}
	if out, errs, code := run("cleanup", "-j", "2", "ks"); code != 0 || out != "" {
		t.Errorf("cleanup (%d): %q %q", code, out, errs)
	}
	if _, errs, code := run("cleanup", "system"); code != 2 || !strings.HasPrefix(errs, "error: Cleanup of the system keyspace is neither necessary nor wise\n") {
		t.Errorf("cleanup system (%d): %q", code, errs)
	}
	if out, _, _ := run("compactionstats"); out != "pending tasks: 0\n\n" {
		t.Errorf("compactionstats: %q", out)
	}
	run("setcompactionthroughput", "32")
	if out, _, _ := run("getcompactionthroughput"); out != "Current compaction throughput: 32 MB/s\n" {
		t.Errorf("getcompactionthroughput: %q", out)
	}
	if out, _, code := run("setcompactionthroughput", "1.2"); code != 1 || !strings.Contains(out, `compaction_throughput: can not convert "1.2" to a Integer`) {
		t.Errorf("setcompactionthroughput 1.2 (%d): %q", code, out)
	}
	if out, _, _ := run("gettraceprobability"); out != "Current trace probability: 0.0\n" {
		t.Errorf("gettraceprobability: %q", out)
	}
	for _, p := range []struct{ set, get string }{{"0.25", "0.25"}, {"1", "1.0"}, {"0.0001", "1.0E-4"}} {
		if out, errs, code := run("settraceprobability", p.set); code != 0 {
			t.Errorf("settraceprobability %s (%d): %s%s", p.set, code, out, errs)
		}
		if out, _, _ := run("gettraceprobability"); out != "Current trace probability: "+p.get+"\n" {
			t.Errorf("gettraceprobability after %s: %q", p.set, out)
		}
		if n.TraceProbability() != must(strconv.ParseFloat(p.set, 64)) {
			t.Errorf("the node's probability after %s: %v", p.set, n.TraceProbability())
		}
	}
	if out, _, code := run("settraceprobability", "1.5"); code != 1 || !strings.Contains(out, "Trace probability must be between 0 and 1") {
		t.Errorf("settraceprobability 1.5 (%d): %q", code, out)
	}
	if _, _, code := run("settraceprobability", "0"); code != 0 || n.TraceProbability() != 0 {
		t.Errorf("settraceprobability 0 (%d): %v", code, n.TraceProbability())
	}
	out, _, code = run("snapshot", "-t", "s1", "ks")
	if code != 0 || out != "Requested creating snapshot(s) for [ks] with snapshot name [s1] and options {skipFlush=false}\nSnapshot directory: s1\n" {
		t.Errorf("snapshot (%d): %q", code, out)
	}
	links, _ := filepath.Glob(filepath.Join(dir, "data", "ks", "t-*", "snapshots", "s1", "sb-*-Data.db"))
	if len(links) != 1 {
		t.Fatalf("snapshot files: %v", links)
	}
	live := strings.Replace(links[0], filepath.Join("snapshots", "s1")+string(filepath.Separator), "", 1)
	a, errA := os.Stat(live)
	b, errB := os.Stat(links[0])
	if errA != nil || errB != nil || a.Sys().(*syscall.Stat_t).Ino != b.Sys().(*syscall.Stat_t).Ino {
		t.Errorf("the snapshot's Data file is not a hard link of %s: %v %v", live, errA, errB)
	}
	if _, errs, code := run("snapshot", "-t", "s1", "ks"); code != 2 || !strings.HasPrefix(errs, "error: Snapshot s1 already exists.") {
		t.Errorf("snapshot again (%d): %q", code, errs)
	}
	out, _, _ = run("listsnapshots")
	if !strings.HasPrefix(out, "Snapshot Details: \nSnapshot name Keyspace name Column family name True size Size on disk\ns1            ks            t                  ") ||
		!strings.Contains(out, "\nTotal TrueDiskSpaceUsed: ") {
		t.Errorf("listsnapshots:\n%q", out)
	}
	if _, errs, code := run("clearsnapshot"); code != 2 || !strings.HasPrefix(errs, "error: Specify snapshot name or --all") {
		t.Errorf("clearsnapshot (%d): %q", code, errs)
	}
	if out, _, code := run("clearsnapshot", "-t", "s1"); code != 0 || out != "Requested clearing snapshot(s) for [all keyspaces] with snapshot name [s1]\n" {
		t.Errorf("clearsnapshot -t s1 (%d): %q", code, out)
	}
	if out, _, _ := run("listsnapshots"); out != "Snapshot Details: \nThere are no snapshots\n" {
		t.Errorf("listsnapshots after clearing: %q", out)
	}
	// Hinted handoff: a node alone keeps no hints; handoff can be turned
	// off and on.
	if out, _, code := run("listpendinghints"); code != 0 || out != "This node does not have any pending hints\n" {
		t.Errorf("listpendinghints (%d): %q", code, out)
	}
	for _, step := range []struct{ cmd, want string }{{"statushandoff", "running"}, {"disablehandoff", ""}, {"statushandoff", "not running"},
		{"enablehandoff", ""}, {"pausehandoff", ""}, {"resumehandoff", ""}, {"statushandoff", "running"}} {
		out, _, code := run(step.cmd)
		if step.want != "" && out != "Hinted handoff is "+step.want+"\n" || step.want == "" && out != "" || code != 0 {
			t.Errorf("%s (%d): %q", step.cmd, code, out)
		}
	}
	if _, errs, code := run("truncatehints", "not-an-address"); code != 2 || !strings.Contains(errs, "UnknownHostException: not-an-address") {
		t.Errorf("truncatehints not-an-address (%d): %q", code, errs)
	}
	if _, errs, code := run("truncatehints", "127.0.0.9"); code != 2 || !strings.Contains(errs, "Can't delete hints for unknown address /127.0.0.9:7000") {
		t.Errorf("truncatehints 127.0.0.9 (%d): %q", code, errs)
	}
	for _, args := range [][]string{{"truncatehints"}, {"truncatehints", "127.0.0.1"}} {
		if _, errs, code := run(args...); code != 0 {
			t.Errorf("%v (%d): %s", args, code, errs)
		}
	}
	if out, _, _ := run("version"); out != "ReleaseVersion: 4.1.6\n" {
		t.Errorf("version: %q", out)
	}
	if out, _, code := run("frobnicate"); code != 1 || !strings.HasPrefix(out, "nodetool: Found unexpected parameters: [frobnicate]") {
		t.Errorf("unknown command (%d): %q", code, out)
	}
	if _, _, code := run("drain"); code != 0 {
		t.Errorf("drain: %d", code)
	}
	if err := s.Query("SELECT * FROM ks.t").Exec(); err == nil {
		t.Error("after drain the node still answers queries")
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
