package storage

import (
	"runtime/debug"
	"testing"
)

// The block cache is Cassandra's file_cache_size: the smaller of 512 MiB
// and a quarter of the memory the process may use.
func TestBlockCacheDefault(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	for _, c := range []struct{ limit, want int64 }{
		{1 << 62, 512 << 20},  // no real limit
		{1 << 30, 256 << 20},  // a quarter of 1 GiB
		{16 << 30, 512 << 20}, // capped
	} {
		debug.SetMemoryLimit(c.limit)
		var o Options
		o.EnsureDefaults()
		if o.BlockCacheSize != c.want {
			t.Errorf("memory limit %d: block cache %d, want %d", c.limit, o.BlockCacheSize, c.want)
		}
	}
	o := Options{BlockCacheSize: 8 << 20}
	o.EnsureDefaults()
	if o.BlockCacheSize != 8<<20 {
		t.Errorf("a configured block cache became %d", o.BlockCacheSize)
	}
}
