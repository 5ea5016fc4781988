package clients

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sibyldb/sibyl/node"
	"github.com/sibyldb/sibyl/tools/nodetool"
)

// TestTopPartitions runs nodetool toppartitions while a client reads and
// writes partitions of known frequencies: the hottest partitions come
// first with their exact counts, the largest write and the reads' queries
// are listed, in Cassandra's layout; the argument errors are Cassandra's.
func TestTopPartitions(t *testing.T) {
	_, nativePort, adminPort := serveNode(t, node.Config{})
	s := session(t, gocqlCluster(nativePort))
	mustExec(t, s, createKeyspace, "CREATE TABLE ks.t (k int, c int, v text, PRIMARY KEY (k, c))")
	run := func(args ...string) (string, int) {
		var out strings.Builder
		code := nodetool.Run(append([]string{"-h", "127.0.0.1", "-p", strconv.Itoa(adminPort)}, args...), &out, &out)
		return out.String(), code
	}
	var out string
	var code int
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		out, code = run("toppartitions", "ks", "t", "3000", "-k", "3")
	}()
	time.Sleep(500 * time.Millisecond) // the sampling has begun
	// Partition k is written k times (7 the most), then read 10-k times
	// (1 the most); partition 42 takes one large write.
	for k := 1; k <= 7; k++ {
		for i := range k {
			mustExec(t, s, "INSERT INTO ks.t (k, c, v) VALUES ("+strconv.Itoa(k)+", "+strconv.Itoa(i)+", 'v')")
		}
		for range 10 - k {
			if err := s.Query("SELECT * FROM ks.t WHERE k = ?", k).Exec(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.Query("INSERT INTO ks.t (k, c, v) VALUES (42, 0, ?)", strings.Repeat("x", 4000)).Exec(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if code != 0 {
		t.Fatalf("toppartitions exited %d:\n%s", code, out)
	}
	want := []string{
		"Frequency of reads by partition:",
		"   Table Partition Count +/-",
		"   ks.t  1         9     0  ",
		"   ks.t  2         8     0  ",
		"   ks.t  3         7     0  ",
		"",
		"Frequency of writes by partition:",
		"   Table Partition Count +/-",
		"   ks.t  7         7     0  ",
		"   ks.t  6         6     0  ",
		"   ks.t  5         5     0  ",
		"",
		"Frequency of cas contentions by partition:",
		"   Nothing recorded during sampling period...",
		"",
		"Max mutation size by partition:",
		"   Table Partition Bytes",
	}
	lines := strings.Split(out, "\n")
	if len(lines) < len(want)+4 || strings.Join(lines[:len(want)], "\n") != strings.Join(want, "\n") {
		t.Fatalf("toppartitions printed:\n%s\nwant it to begin:\n%s", out, strings.Join(want, "\n"))
	}
	if !regexp.MustCompile(`^   ks\.t  42 +(\d{4}) *$`).MatchString(lines[len(want)]) {
		t.Errorf("the largest write: %q", lines[len(want)])
	}
	if !regexp.MustCompile(`\nLongest read query times:\n   Query +Microseconds\n(   SELECT \* FROM ks\.t WHERE k = [1-7] +[0-9]+ *\n){3}$`).MatchString(out) {
		t.Errorf("read query times:\n%s", out)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"toppartitions", "ks", "100"}, "nodetool: Invalid arguments, either [keyspace table duration] or [duration] or no args\n"},
		{[]string{"toppartitions", "-k", "300", "100"}, "nodetool: TopK count (-k) option must be smaller then the summary capacity (-s)\n"},
		{[]string{"toppartitions", "-a", "reads,bogus", "100"}, "nodetool: 'bogus' sampler is not available from: [READS, WRITES, LOCAL_READ_TIME, WRITE_SIZE, CAS_CONTENTIONS]\n"},
	} {
		if out, code := run(c.args...); code != 1 || !strings.HasPrefix(out, c.want) {
			t.Errorf("%v (%d): %q, want %q", c.args, code, out, c.want)
		}
	}
	// profileload is the same command; -a picks the samplers printed.
	out, code = run("profileload", "100", "-a", "WRITES")
	if code != 0 || out != "Frequency of writes by partition:\n   Nothing recorded during sampling period...\n" {
		t.Errorf("profileload -a WRITES (%d):\n%s", code, out)
	}
}
