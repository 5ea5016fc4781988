package testutil

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// RunAndKill starts this test binary again as a crash child with the given
// environment (its TestMain must recognise it), waits for the first
// "ack N" line, lets it run for after, kills it with SIGKILL and returns
// every N it acknowledged. A line starting "error" fails the test.
func RunAndKill(t testing.TB, env []string, after time.Duration) []int {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var acked []int
	started := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		once := sync.OnceFunc(func() { close(started) })
		defer once()
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			if n, ok := strings.CutPrefix(line, "ack "); ok {
				if v, err := strconv.Atoi(n); err == nil {
					acked = append(acked, v)
				}
				once()
			} else if strings.HasPrefix(line, "error") {
				t.Errorf("crash child: %s", line)
			}
		}
	}()
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Errorf("crash child acknowledged nothing in 30 s")
	}
	time.Sleep(after)
	_ = cmd.Process.Kill()
	<-done
	_ = cmd.Wait()
	return acked
}
