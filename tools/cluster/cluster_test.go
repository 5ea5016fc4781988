package cluster

import (
	"bytes"
	"github.com/sibyldb/sibyl/internal/testutil"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// sibyl is the binary the test's nodes run, built once.
var sibyl string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "sibyl-cluster-test")
	if err != nil {
		panic(err)
	}
	sibyl = filepath.Join(dir, "sibyl")
	build := exec.Command("go", "build", "-o", sibyl, "../../cmd/sibyl")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		os.RemoveAll(dir)
		panic("building sibyl: " + err.Error())
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestUpStopStartDown runs a three-node cluster of real processes: up
// returns once node1 sees three nodes up, a second up refuses, a stopped
// node shows down and comes back, and down stops every process.
func TestUpStopStartDown(t *testing.T) {
	var out bytes.Buffer
	c := &Cluster{Dir: t.TempDir(), Out: &out, UpTimeout: time.Minute, Config: Config{Nodes: 3, Binary: sibyl,
		NativePort: testutil.FreePort(t), AdminPort: testutil.FreePort(t), GossipPort: testutil.FreePort(t), StoragePort: testutil.FreePort(t)}}
	defer Down(c) // whatever happens, no node outlives the test
	if err := Up(c); err != nil {
		t.Fatalf("up: %v\n%s", err, out.String())
	}
	status := func() string {
		t.Helper()
		out.Reset()
		if err := Status(c, &out); err != nil {
			t.Fatalf("status: %v\n%s", err, out.String())
		}
		return out.String()
	}
	un := regexp.MustCompile(`(?m)^UN  127\.0\.0\.[123] `)
	if s := status(); len(un.FindAllString(s, -1)) != 3 || !strings.Contains(s, "node3: running") {
		t.Fatalf("status after up:\n%s", s)
	}
	if err := Up(&Cluster{Dir: c.Dir, Out: &out, Config: Config{Nodes: 3, Binary: sibyl}}); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Fatalf("a second up: %v", err)
	}

	if err := c.Stop(3); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for s := status(); !strings.Contains(s, "DN  127.0.0.3 ") || !strings.Contains(s, "node3: stopped"); s = status() {
		if time.Now().After(deadline) {
			t.Fatalf("status with node3 stopped:\n%s", s)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := c.Start(3); err != nil {
		t.Fatal(err)
	}
	if err := c.waitAllUp(); err != nil {
		t.Fatal(err)
	}

	pids := c.running()
	if err := Down(c); err != nil {
		t.Fatal(err)
	}
	if left := c.running(); len(pids) != 3 || len(left) != 0 {
		t.Fatalf("before down %v ran, after it %v", pids, left)
	}
	if log, err := os.ReadFile(c.LogFile(1)); err != nil || !strings.Contains(string(log), "stopped") {
		t.Errorf("node1's log does not end with a clean stop: %v\n%s", err, tail(c.LogFile(1), 5))
	}
}
