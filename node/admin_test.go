package node

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sibyldb/sibyl/cql/exec"
)

// TestAdminAPI drives the admin API over HTTP as nodetool does.
func TestAdminAPI(t *testing.T) {
	dir := t.TempDir()
	n, err := Open(Config{DataDir: dir, AdminPort: freePort(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	addr, err := n.StartAdmin()
	if err != nil {
		t.Fatal(err)
	}
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
		"/tablestats?keyspace=ks&table=nope":                         {500, "Unknown keyspace/cf pair (ks.nope)"},
		"/endpoints?keyspace=ks&table=t&key=" + url.QueryEscape("x"): {500, "Unable to make int from 'x'"},
		"/endpoints?keyspace=ks&table=nope&key=1":                    {400, "Unknown table 'nope' in keyspace 'ks'"},
		"/describering?keyspace=system":                              {500, "There is no ring for the keyspace: system"},
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
