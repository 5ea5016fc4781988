package schema

import (
	"testing"

	"github.com/sibyldb/sibyl/partitioner"
)

// TestVirtualKeysOrderByComponent checks that a virtual table's
// partitions order by each key component's text, not by the composite
// encoding (whose length prefixes would put "b" before "aa").
func TestVirtualKeysOrderByComponent(t *testing.T) {
	key := func(ks, table string) []byte { return partitioner.CompositeKey([]byte(ks), []byte(table)) }
	for _, c := range []struct {
		a, b []byte
		want int
	}{
		{key("aa", "y"), key("b", "x"), -1},
		{key("system", "local"), key("system", "peers"), -1},
		{key("system_views", "a"), key("system", "z"), 1},
		{key("ks", "t"), key("ks", "t"), 0},
	} {
		if got := CompareVirtualKeys(LocalReadLatencyView, c.a, c.b); sign(got) != c.want {
			t.Errorf("CompareVirtualKeys(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
	if got := CompareVirtualKeys(SettingsView, []byte("b"), []byte("aa")); got <= 0 {
		t.Errorf("settings: %q ordered before %q", "b", "aa")
	}
}

func sign(v int) int {
	switch {
	case v < 0:
		return -1
	case v > 0:
		return 1
	}
	return 0
}
