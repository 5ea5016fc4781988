package node

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sibyldb/sibyl/cql/exec"
)

// adminNode opens a node in dir with its admin API on a free port; the
// test closes it.
func adminNode(t *testing.T, dir string) (*Node, net.Addr) {
	t.Helper()
	n, err := Open(Config{DataDir: dir, AdminPort: freePort(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	addr, err := n.StartAdmin()
	if err != nil {
		t.Fatal(err)
	}
	return n, addr
}

// TestAdminAPI drives the admin API over HTTP as nodetool does.
func TestAdminAPI(t *testing.T) {
	dir := t.TempDir()
	n, addr := adminNode(t, dir)
	call := func(method, path string, into any) (int, string) {
		req, _ := http.NewRequest(method, "http://"+addr.String()+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if into != nil && resp.StatusCode == 200 {
			if err := json.Unmarshal(body, into); err != nil {
				t.Fatalf("%s %s: %v in %s", method, path, err, body)
			}
		}
		return resp.StatusCode, string(body)
	}
	if _, err := exec.NewSession(n).Run(`CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
		CREATE TABLE ks.t (k int PRIMARY KEY, v text);
		INSERT INTO ks.t (k, v) VALUES (1, 'one');
		INSERT INTO ks.t (k, v) VALUES (2, 'two')`); err != nil {
		t.Fatal(err)
	}
	// Go's profiler is served beside the API: the index lists the CPU profile.
	if code, body := call("GET", "/debug/pprof/", nil); code != 200 || !strings.Contains(body, "profile") {
		t.Fatalf("pprof index: %d %.200s", code, body)
	}
	var status []AdminStatus
	call("GET", "/status", &status)
	if len(status) != 1 || status[0].Status != "Up" || len(status[0].Tokens) != 16 || len(status[0].HostID) != 36 {
		t.Fatalf("status %+v", status)
	}
	if code, _ := call("POST", "/flush?keyspace=ks", nil); code != 200 {
		t.Fatalf("flush: %d", code)
	}
	var stats []AdminTableStats
	call("GET", "/tablestats?keyspace=ks&table=t", &stats)
	if len(stats) != 1 || stats[0].SSTables != 1 || stats[0].Writes != 2 || stats[0].LiveBytes == 0 {
		t.Fatalf("tablestats %+v", stats)
	}
	call("GET", "/status", &status)
	if status[0].LoadBytes < stats[0].LiveBytes {
		t.Fatalf("load %d below the table's %d bytes", status[0].LoadBytes, stats[0].LiveBytes)
	}
	if code, body := call("POST", "/snapshot?tag=first&keyspace=ks", nil); code != 200 {
		t.Fatalf("snapshot: %d %s", code, body)
	}
	schemaFile, _ := filepath.Glob(filepath.Join(dir, "data", "ks", "t-*", "snapshots", "first", "schema.cql"))
	if len(schemaFile) != 1 {
		t.Fatalf("no schema.cql in the snapshot: %v", schemaFile)
	}
	if raw, _ := os.ReadFile(schemaFile[0]); !strings.HasPrefix(string(raw), "CREATE TABLE IF NOT EXISTS ks.t (") {
		t.Fatalf("schema.cql: %s", raw)
	}
	var snaps []AdminSnapshot
	call("GET", "/snapshots", &snaps)
	if len(snaps) != 1 || snaps[0].Tag != "first" || snaps[0].Keyspace != "ks" || snaps[0].Bytes == 0 {
		t.Fatalf("snapshots %+v", snaps)
	}
	if code, body := call("POST", "/clearsnapshot?keyspace=ks", nil); code != 400 || !strings.Contains(body, "Specify snapshot name or --all") {
		t.Fatalf("clearsnapshot without a tag: %d %s", code, body)
	}
	call("POST", "/clearsnapshot?tag=first", nil)
	call("GET", "/snapshots", &snaps)
	if len(snaps) != 0 {
		t.Fatalf("after clearsnapshot: %+v", snaps)
	}
	for path, want := range map[string]struct {
		code int
		msg  string
	}{
		"/tablestats?keyspace=nope":                                  {400, "Keyspace [nope] does not exist."},
		"/tablestats?keyspace=ks&table=nope":                         {400, "Unknown keyspace/cf pair (ks.nope)"},
		"/endpoints?keyspace=ks&table=t&key=" + url.QueryEscape("x"): {400, "Unable to make int from 'x'"},
		"/endpoints?keyspace=ks&table=nope&key=1":                    {400, "Unknown table 'nope' in keyspace 'ks'"},
		"/describering?keyspace=system":                              {400, "There is no ring for the keyspace: system"},
	} {
		code, body := call("GET", path, nil)
		if code != want.code || !strings.Contains(body, want.msg) {
			t.Errorf("%s: %d %s, want %d with %q", path, code, body, want.code, want.msg)
		}
	}
	var endpoints []string
	call("GET", "/endpoints?keyspace=ks&table=t&key=1", &endpoints)
	if fmt.Sprint(endpoints) != "[127.0.0.1]" {
		t.Fatalf("endpoints %v", endpoints)
	}
	var ring []AdminRange
	call("GET", "/describering?keyspace=ks", &ring)
	if len(ring) != 16 || ring[0].Start != ring[15].End {
		t.Fatalf("describering %+v", ring)
	}
	if code, _ := call("POST", "/compactionthroughput?value=12", nil); code != 200 {
		t.Fatal("setcompactionthroughput failed")
	}
	var tp map[string]int
	call("GET", "/compactionthroughput", &tp)
	if tp["mib_per_sec"] != 12 {
		t.Fatalf("compaction throughput %v", tp)
	}
}

// TestAdminRefusesBadParameters sends every admin request a parameter a
// careless or hostile caller might: path-like snapshot tags, names that are
// paths, negative numbers, keys that do not parse. Each is a 400 naming
// the problem, and nothing is removed or written outside the snapshot
// directories: a file beside the data directory and the table's own
// SSTables are still there after all of them.
func TestAdminRefusesBadParameters(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "node")
	n, addr := adminNode(t, dir)
	canary := filepath.Join(root, "canary")
	if err := os.WriteFile(canary, []byte("still here"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := exec.NewSession(n).Run(`CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
		CREATE TABLE ks.t (k int PRIMARY KEY, v text);
		INSERT INTO ks.t (k, v) VALUES (1, 'one')`); err != nil {
		t.Fatal(err)
	}
	post := func(path string) (int, string) {
		resp, err := http.Post("http://"+addr.String()+path, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := post("/flush?keyspace=ks"); code != 200 {
		t.Fatalf("flush: %d %s", code, body)
	}
	tableFiles := func() []string {
		t.Helper()
		matches, err := filepath.Glob(filepath.Join(dir, "data", "ks", "t-*", "sb-*"))
		if err != nil || len(matches) == 0 {
			t.Fatalf("the table's SSTables: %v, %v", matches, err)
		}
		return matches
	}
	before := tableFiles()
	escape := url.QueryEscape
	for _, c := range []struct{ method, path, want string }{
		{"POST", "/clearsnapshot?tag=" + escape("../../../../../canary"), "not a snapshot name"},
		{"POST", "/clearsnapshot?tag=..", "not a snapshot name"},
		{"POST", "/clearsnapshot?tag=.", "not a snapshot name"},
		{"POST", "/clearsnapshot?tag=" + escape(`..\..`), "not a snapshot name"},
		{"POST", "/clearsnapshot?tag=" + escape("a\x00b"), "not a snapshot name"},
		{"POST", "/clearsnapshot?keyspace=ks&tag=" + escape("../../t"), "not a snapshot name"},
		{"POST", "/clearsnapshot", "Specify snapshot name or --all"},
		{"POST", "/snapshot?tag=" + escape("../../../escaped"), "not a snapshot name"},
		{"POST", "/snapshot?tag=" + strings.Repeat("x", 300), "not a snapshot name"},
		{"POST", "/snapshot?keyspace=" + escape("../ks"), "does not exist"},
		{"POST", "/flush?keyspace=ks&table=" + escape("../t"), "Unknown keyspace/cf pair"},
		{"POST", "/compact?keyspace=" + escape("/etc"), "does not exist"},
		{"POST", "/compactionthroughput?value=-5", "negative"},
		{"POST", "/compactionthroughput?value=lots", "not a number"},
		{"GET", "/endpoints?keyspace=ks&table=t&key=notanint", "Unable to make int from 'notanint'"},
		{"GET", "/endpoints?keyspace=ks&table=" + escape("../t") + "&key=1", "Unknown table"},
		{"GET", "/describering?keyspace=system", "There is no ring"},
		{"GET", "/describering?keyspace=" + escape("../ks"), "does not exist"},
		{"GET", "/tablestats?keyspace=ks&table=nope", "Unknown keyspace/cf pair"},
		{"GET", "/snapshots?keyspace=nope", "does not exist"},
		{"GET", "/status?keyspace=nope", "does not exist"},
	} {
		req, _ := http.NewRequest(c.method, "http://"+addr.String()+c.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), c.want) {
			t.Errorf("%s %s: %d %s, want 400 naming %q", c.method, c.path, resp.StatusCode, body, c.want)
		}
	}
	if b, err := os.ReadFile(canary); err != nil || string(b) != "still here" {
		t.Fatalf("the file outside the data directory: %q, %v", b, err)
	}
	if after := tableFiles(); len(after) != len(before) {
		t.Fatalf("the table's files went from %v to %v", before, after)
	}
	if escaped, _ := filepath.Glob(filepath.Join(root, "escaped*")); len(escaped) > 0 {
		t.Fatalf("a snapshot was written outside the data directory: %v", escaped)
	}
	// A plain tag still works, and clearing it removes only it.
	if code, body := post("/snapshot?keyspace=ks&tag=good"); code != 200 {
		t.Fatalf("snapshot: %d %s", code, body)
	}
	if code, body := post("/snapshot?keyspace=ks&tag=good"); code != 400 || !strings.Contains(body, "Snapshot good already exists.") {
		t.Fatalf("snapshot again: %d %s", code, body)
	}
	if code, body := post("/clearsnapshot?keyspace=ks&tag=good"); code != 200 {
		t.Fatalf("clearsnapshot: %d %s", code, body)
	}
	if after := tableFiles(); len(after) != len(before) {
		t.Fatalf("after clearing a snapshot the table's files went from %v to %v", before, after)
	}
}
