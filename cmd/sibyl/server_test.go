package main

import (
	"os"
	"runtime/debug"
	"testing"
)

// A command's own GC percent applies unless GOGC says otherwise.
func TestDefaultGCPercent(t *testing.T) {
	restore := debug.SetGCPercent(100)
	defer debug.SetGCPercent(restore)
	t.Setenv("GOGC", "50") // restored after the test, set or not
	defaultGCPercent(serverGCPercent)
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("with GOGC set the server changed the GC percent to %d", got)
	}
	os.Unsetenv("GOGC")
	defaultGCPercent(serverGCPercent)
	if got := debug.SetGCPercent(100); got != serverGCPercent {
		t.Fatalf("without GOGC the GC percent is %d, want %d", got, serverGCPercent)
	}
}
