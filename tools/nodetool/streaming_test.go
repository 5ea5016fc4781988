package nodetool

import (
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// netstats prints each session as Cassandra's nodetool does, a section
// counted as a file, and says so when there is none; rebuild passes its
// keyspace and source data centre on.
func TestNetstatsAndRebuild(t *testing.T) {
	sessions := `[{"operation":"Rebuild","session":"42","peer":"127.0.0.2","receiving":true,"sections":4,"sections_done":1,"bytes":2000,"bytes_done":500},` +
		`{"operation":"Rebuild","session":"43","peer":"127.0.0.3","receiving":false,"sections":2,"sections_done":2,"bytes":100,"bytes_done":150}]`
	var rebuilt string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/netstats":
			_, _ = w.Write([]byte(`{"mode":"NORMAL","read_repair_attempted":3,"sessions":` + sessions + `}`))
		case "/rebuild":
			rebuilt = r.URL.RawQuery
			_, _ = w.Write([]byte(`null`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	host, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	run := func(args ...string) string {
		t.Helper()
		var out, errs bytes.Buffer
		if code := Run(append([]string{"-h", host, "-p", port}, args...), &out, &errs); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs.String())
		}
		return out.String()
	}
	want := "Mode: NORMAL\n" +
		"Rebuild 42\n    /127.0.0.2\n" +
		"        Receiving 4 files, 2000 bytes total. Already received 1 files (25.00%), 500 bytes total (25.00%)\n" +
		"Rebuild 43\n    /127.0.0.3\n" +
		"        Sending 2 files, 150 bytes total. Already sent 2 files (100.00%), 150 bytes total (100.00%)\n" +
		"Read Repair Statistics:\nAttempted: 3\nMismatch (Blocking): 3\nMismatch (Background): 0\n"
	if got := run("netstats"); got != want {
		t.Fatalf("netstats:\n%s\nwant\n%s", got, want)
	}
	sessions = `[]`
	if got := run("netstats"); got != "Mode: NORMAL\nNot sending any streams.\nRead Repair Statistics:\nAttempted: 3\nMismatch (Blocking): 3\nMismatch (Background): 0\n" {
		t.Fatalf("netstats with no session:\n%s", got)
	}
	run("rebuild", "-ks", "r", "dc2")
	if rebuilt != "dc=dc2&keyspace=r" {
		t.Fatalf("rebuild asked for %q", rebuilt)
	}
	var out, errs bytes.Buffer
	if code := Run([]string{"-h", host, "-p", port, "rebuild", "dc1", "dc2"}, &out, &errs); code != 1 {
		t.Fatalf("rebuild of two data centres: exit %d", code)
	}
}

// decommission passes --force on; removenode sends a host id, prints the
// status line for status, and prints it before forcing, as Cassandra's
// does; what the node refuses is a failed command.
func TestDecommissionAndRemoveNode(t *testing.T) {
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
		switch {
		case r.URL.Path == "/removenode" && r.Method == "GET":
			_, _ = w.Write([]byte(`{"status":"RemovalStatus: No removals in process."}`))
		case r.URL.Query().Get("host_id") == "bad":
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":"Host ID not found.","failure":true}`))
		default:
			_, _ = w.Write([]byte(`null`))
		}
	}))
	defer srv.Close()
	host, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	run := func(args ...string) (int, string, string) {
		var out, errs bytes.Buffer
		code := Run(append([]string{"-h", host, "-p", port}, args...), &out, &errs)
		return code, out.String(), errs.String()
	}
	if code, _, errs := run("decommission", "--force"); code != 0 || asked[0] != "POST /decommission?force=true" {
		t.Fatalf("decommission --force: exit %d (%s), asked %v", code, errs, asked)
	}
	if code, _, _ := run("decommission", "now"); code != 1 {
		t.Fatalf("decommission with an argument: exit %d", code)
	}
	if code, out, _ := run("removenode", "status"); code != 0 || out != "RemovalStatus: No removals in process.\n" {
		t.Fatalf("removenode status: exit %d, %q", code, out)
	}
	asked = nil
	if code, out, _ := run("removenode", "force"); code != 0 || out != "RemovalStatus: No removals in process.\n" || len(asked) != 2 || asked[1] != "POST /removenode?force=true" {
		t.Fatalf("removenode force: exit %d, %q, asked %v", code, out, asked)
	}
	if code, _, _ := run("removenode", "e0a6ca0c-0b9d-4b8e-8b43-3b2f2f0c5a11"); code != 0 || asked[2] != "POST /removenode?host_id=e0a6ca0c-0b9d-4b8e-8b43-3b2f2f0c5a11" {
		t.Fatalf("removenode ID: exit %d, asked %v", code, asked)
	}
	if code, _, errs := run("removenode", "bad"); code == 0 || !strings.Contains(errs, "Host ID not found.") {
		t.Fatalf("removenode of an unknown host id: exit %d, %q", code, errs)
	}
}

// repair passes its options and the keyspace and tables on, and prints
// the node's report line by line with a timestamp.
func TestRepair(t *testing.T) {
	var asked string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = r.URL.RawQuery
		_, _ = w.Write([]byte(`{"lines":["Repair of [ks]: 3 ranges","Repair completed successfully"]}`))
	}))
	defer srv.Close()
	host, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	var out, errs bytes.Buffer
	if code := Run([]string{"-h", host, "-p", port, "repair", "-full", "-pr", "-dc", "dc1", "-dc", "dc2", "-st", "-5", "-et", "7", "ks", "a", "b"}, &out, &errs); code != 0 {
		t.Fatalf("repair: exit %d: %s", code, errs.String())
	}
	if asked != "dc=dc1%2Cdc2&et=7&keyspace=ks&pr=true&st=-5&tables=a%2Cb" {
		t.Fatalf("repair asked for %q", asked)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "[") || !strings.HasSuffix(lines[1], "] Repair completed successfully") {
		t.Fatalf("repair printed %q", out.String())
	}
	for _, bad := range [][]string{{"repair", "-st", "1"}, {"repair", "--nope"}, {"repair", "-dc"}} {
		if code := Run(append([]string{"-h", host, "-p", port}, bad...), &out, &errs); code != 1 {
			t.Fatalf("%v: exit %d", bad, code)
		}
	}
}
