package native

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

func TestCompressorsRoundTripAndRefuseBombs(t *testing.T) {
	for _, name := range []string{"lz4", "snappy", "LZ4"} {
		c, ok := compressorNamed(name)
		if !ok {
			t.Fatalf("%s: unknown", name)
		}
		for _, src := range [][]byte{nil, []byte("x"), []byte(strings.Repeat("abc", 10_000)), {0, 255, 7, 9, 1, 2, 3}} {
			got, err := c.decompress(c.compress(src), 1<<20)
			if err != nil || !bytes.Equal(got, src) {
				t.Errorf("%s: %d bytes came back as %d, %v", name, len(src), len(got), err)
			}
		}
		big := c.compress([]byte(strings.Repeat("z", 1<<16)))
		if _, err := c.decompress(big, 1<<10); err == nil {
			t.Errorf("%s: a body growing past the limit was accepted", name)
		}
	}
	// A forged LZ4 length is checked before anything is allocated.
	forged := binary.BigEndian.AppendUint32(nil, 1<<31-1)
	if _, err := (lz4Compressor{}).decompress(append(forged, 0), 1<<20); err == nil {
		t.Error("a forged lz4 length was accepted")
	}
	if _, ok := compressorNamed("zstd"); ok {
		t.Error("zstd is not a protocol compression")
	}
}
