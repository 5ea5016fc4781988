package testutil

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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

// CrashChildWrites is the child side of RunAndKill: four goroutines take
// numbers from start upwards, write each and print "ack N" once the write
// returned. It runs until the process is killed; a failed write ends the
// child through CrashChildFail.
func CrashChildWrites(start int, write func(n int) error) {
	var next atomic.Int64
	next.Store(int64(start))
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				n := int(next.Add(1) - 1)
				if err := write(n); err != nil {
					CrashChildFail(err)
				}
				fmt.Printf("ack %d\n", n)
			}
		}()
	}
	wg.Wait()
}

// CrashChildFail reports a crash child's error to RunAndKill and exits.
func CrashChildFail(err error) {
	fmt.Println("error", err)
	os.Exit(1)
}
