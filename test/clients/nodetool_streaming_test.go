package clients

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/sibyldb/sibyl/internal/testutil"
	"github.com/sibyldb/sibyl/node"
	"github.com/sibyldb/sibyl/tools/nodetool"
)

// TestNodetoolStreamThroughput: setstreamthroughput and
// getstreamthroughput speak Cassandra 4.1's units (megabits of 10^6 bits,
// or MiB with -m and -e), print what was set, and refuse what Cassandra
// refuses with its messages.
func TestNodetoolStreamThroughput(t *testing.T) {
	adminPort := testutil.FreePort(t)
	n, err := node.Open(node.Config{DataDir: t.TempDir(), AdminPort: adminPort, NativePort: testutil.FreePort(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if _, err := n.StartAdmin(); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, string, int) {
		var out, errs bytes.Buffer
		code := nodetool.Run(append([]string{"-h", "127.0.0.1", "-p", strconv.Itoa(adminPort)}, args...), &out, &errs)
		return out.String(), errs.String(), code
	}
	steps := []struct {
		args []string
		code int
		out  string // stdout, or what stdout or stderr contains when code is not 0
	}{
		// 24 MiB/s, the default, is not a whole number of megabits.
		{[]string{"getstreamthroughput"}, 2, "Use the -d flag to quiet this error and get the exact throughput in megabits/s"},
		{[]string{"getstreamthroughput", "-d"}, 0, "Current stream throughput: 201.326592 Mb/s\n"},
		{[]string{"getstreamthroughput", "-m"}, 0, "Current stream throughput: 24.0 MiB/s\n"},
		{[]string{"getstreamthroughput", "-e"}, 0, "Current entire SSTable stream throughput: 24.0 MiB/s\n"},
		{[]string{"setstreamthroughput", "7"}, 0, ""},
		{[]string{"getstreamthroughput"}, 0, "Current stream throughput: 7 Mb/s\n"},
		{[]string{"getstreamthroughput", "-m"}, 0, "Current stream throughput: 0.8344650268554688 MiB/s\n"},
		{[]string{"setstreamthroughput", "-m", "7"}, 0, ""},
		{[]string{"getstreamthroughput", "-m"}, 0, "Current stream throughput: 7.0 MiB/s\n"},
		{[]string{"getstreamthroughput", "-d"}, 0, "Current stream throughput: 58.720256 Mb/s\n"},
		{[]string{"setstreamthroughput", "-e", "100"}, 0, ""},
		{[]string{"getstreamthroughput", "-e"}, 0, "Current entire SSTable stream throughput: 100.0 MiB/s\n"},
		{[]string{"getstreamthroughput", "-m"}, 0, "Current stream throughput: 7.0 MiB/s\n"},
		{[]string{"setstreamthroughput", "0"}, 0, ""},
		{[]string{"getstreamthroughput"}, 0, "Current stream throughput: unlimited\n"},
		{[]string{"setstreamthroughput", "-e", "0"}, 0, ""},
		{[]string{"getstreamthroughput", "-e"}, 0, "Current entire SSTable stream throughput: unlimited\n"},
		{[]string{"setstreamthroughput"}, 1, "Required parameters are missing: stream_throughput"},
		{[]string{"setstreamthroughput", "1.2"}, 1, `stream_throughput: can not convert "1.2" to a int`},
		{[]string{"setstreamthroughput", "value"}, 1, `stream_throughput: can not convert "value" to a int`},
		{[]string{"setstreamthroughput", "2147483647"}, 1, "Invalid data rate: 2147483647 megabits per second; stream_throughput_outbound " +
			"and inter_dc_stream_throughput_outbound should be between 0 and 2147483646 in megabits per second"},
		{[]string{"setstreamthroughput", "-m", "2147483647"}, 1, "stream_throughput_outbound: 2147483647 is too large; it should be less than 2147483647 in megabits/s"},
		{[]string{"setstreamthroughput", "-m", "5", "-e", "5"}, 1, "You cannot use -e and -m at the same time"},
		{[]string{"getstreamthroughput", "-m", "-e"}, 1, "You cannot use more than one flag with this command"},
		{[]string{"getstreamthroughput", "-m", "-d"}, 1, "You cannot use more than one flag with this command"},
		{[]string{"getstreamthroughput", "-d", "-e"}, 1, "You cannot use more than one flag with this command"},
		// The refusals left the last bounds alone.
		{[]string{"getstreamthroughput"}, 0, "Current stream throughput: unlimited\n"},
		{[]string{"setstreamthroughput", "2147483646"}, 0, ""},
		{[]string{"getstreamthroughput"}, 0, "Current stream throughput: 2147483646 Mb/s\n"},
	}
	for _, s := range steps {
		out, errs, code := run(s.args...)
		if code != s.code {
			t.Fatalf("%v: exit %d, want %d: %q %q", s.args, code, s.code, out, errs)
		}
		if s.code == 0 && out != s.out || s.code != 0 && !strings.Contains(out+errs, s.out) {
			t.Fatalf("%v: %q %q, want %q", s.args, out, errs, s.out)
		}
	}
}
