package partitioner

import (
	"bytes"
	"strings"
	"testing"
)

func TestCompositeKeyRoundTrip(t *testing.T) {
	for _, comps := range [][][]byte{
		{[]byte{0, 0, 0, 143}, []byte{0, 0, 0, 234}},
		{[]byte("a")},
		{{}, {}},
		{[]byte("user"), {}, []byte{0xff, 0x00}},
		{bytes.Repeat([]byte{7}, MaxComponentLen), []byte("x")},
	} {
		key := CompositeKey(comps...)
		wantLen := 0
		for _, c := range comps {
			wantLen += 3 + len(c)
		}
		if len(key) != wantLen {
			t.Fatalf("CompositeKey len = %d, want %d", len(key), wantLen)
		}
		parts, err := SplitCompositeKey(key)
		if err != nil {
			t.Fatalf("SplitCompositeKey(%x): %v", key, err)
		}
		if len(parts) != len(comps) {
			t.Fatalf("got %d parts, want %d", len(parts), len(comps))
		}
		for i := range comps {
			if !bytes.Equal(parts[i], comps[i]) {
				t.Fatalf("part %d = %x, want %x", i, parts[i], comps[i])
			}
		}
		// Parts alias the key but cannot grow into the next component.
		if len(parts) > 1 {
			_ = append(parts[0], 0xAA, 0xAA, 0xAA)
			if !bytes.Equal(key, CompositeKey(comps...)) {
				t.Fatalf("appending to a part overwrote the key")
			}
		}
		if got := AppendCompositeKey([]byte("pre"), comps...); !bytes.Equal(got, append([]byte("pre"), key...)) {
			t.Fatalf("AppendCompositeKey did not append")
		}
	}
	if got := CompositeKey(); len(got) != 0 {
		t.Errorf("CompositeKey() = %x, want empty", got)
	}
	if parts, err := SplitCompositeKey(nil); err != nil || len(parts) != 0 {
		t.Errorf("SplitCompositeKey(empty) = %v, %v; want no parts", parts, err)
	}
}

func TestSplitCompositeKeyErrors(t *testing.T) {
	for _, c := range []struct{ hex, want string }{
		{"00", "need 2 length bytes"},
		{"0001", "overruns"},
		{"000161", "overruns"},
		{"00016101", "end-of-component byte is 0x01"},
		{"000161ff", "end-of-component byte is 0xff"},
		{"00016100" + "00", "need 2 length bytes"},
		{"00016100" + "0005616200", "overruns"},
		{"ffff00", "overruns"},
	} {
		_, err := SplitCompositeKey(mustHex(c.hex))
		if err == nil || !strings.HasPrefix(err.Error(), "partitioner: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("SplitCompositeKey(%s) = %v, want error containing %q", c.hex, err, c.want)
		}
	}
}

func TestAppendCompositeKeyNoExtraAllocs(t *testing.T) {
	a, b := []byte{0, 0, 0, 1}, []byte("hello")
	buf := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(100, func() { buf = AppendCompositeKey(buf[:0], a, b) }); n != 0 {
		t.Errorf("AppendCompositeKey into a large enough buffer allocates %v times", n)
	}
}
