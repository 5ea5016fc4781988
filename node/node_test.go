package node

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpenCreatesTheDataLayoutAndReopens(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 2; i++ {
		n, err := Open(Config{DataDir: dir})
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		if err := n.Close(); err != nil {
			t.Fatalf("close %d: %v", i, err)
		}
	}
	for _, sub := range []string{"data", "commitlog"} {
		if st, err := os.Stat(filepath.Join(dir, sub)); err != nil || !st.IsDir() {
			t.Fatalf("%s/ missing after start-up: %v", sub, err)
		}
	}
}

func TestBadSettingIsRefusedByName(t *testing.T) {
	_, err := Open(Config{DataDir: t.TempDir(), CommitLogSync: "sometimes"})
	if err == nil || !strings.Contains(err.Error(), "commitlog_sync") {
		t.Fatalf("Open = %v, want an error naming commitlog_sync", err)
	}
}
