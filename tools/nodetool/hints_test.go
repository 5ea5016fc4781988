package nodetool

import (
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

// listpendinghints lays its replicas out as Cassandra's nodetool does,
// the files' times in UTC with milliseconds.
func TestListPendingHintsTable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/hints" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(`[{"host_id":"8aa083eb-9ca9-44b7-a997-1d496754213d","address":"127.0.0.3:7000","rack":"rack1",` +
			`"data_center":"datacenter1","status":"DOWN","total_files":2,"newest":1796206409592,"oldest":1796206000001}]`))
	}))
	defer srv.Close()
	host, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	var out, errs bytes.Buffer
	if code := Run([]string{"-h", host, "-p", port, "listpendinghints"}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	want := "Host ID                              Address        Rack  DC          Status Total files Newest                  Oldest                 \n" +
		"8aa083eb-9ca9-44b7-a997-1d496754213d 127.0.0.3:7000 rack1 datacenter1 DOWN   2           2026-12-02 10:13:29,592 2026-12-02 10:06:40,001\n"
	if out.String() != want {
		t.Fatalf("got\n%q\nwant\n%q", out.String(), want)
	}
}
