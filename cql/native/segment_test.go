package native

import (
	"bytes"
	"encoding/hex"
	"io"
	"strings"
	"testing"
)

// The vectors come from the DataStax Python driver's segment codec (3.25).
func TestSegmentChecksumsMatchThePythonDriver(t *testing.T) {
	if got := crc24(0x2000A, 3); got != 0x79688c {
		t.Errorf("crc24(0x2000A) = %06x", got)
	}
	if got := crc24(0x123456789A, 5); got != 0x40d313 {
		t.Errorf("crc24(0x123456789A) = %06x", got)
	}
	if got := payloadCRC([]byte("hello")); got != 0xb60e8074 {
		t.Errorf("crc32(hello) = %08x", got)
	}
	envelope := []byte{4, 0, 0, 1, 7, 0, 0, 0, 0}
	want, _ := hex.DecodeString("090002a4c8c10400000107000000009612cfeb")
	if got := appendSegments(nil, [][]byte{envelope}, false); !bytes.Equal(got, want) {
		t.Errorf("segment %x, the Python driver writes %x", got, want)
	}
}

func TestSegmentsRoundTrip(t *testing.T) {
	small := []byte("a small envelope")
	big := []byte(strings.Repeat("0123456789", 30_000)) // over one segment
	for _, useLZ4 := range []bool{false, true} {
		var envelopes [][]byte
		for i := 0; i < 20_000; i++ { // several segments of whole envelopes
			envelopes = append(envelopes, small)
		}
		envelopes = append(envelopes, big, small)
		stream := appendSegments(nil, envelopes, useLZ4)
		got, err := io.ReadAll(&segmentReader{r: bytes.NewReader(stream), lz4: useLZ4})
		if err != nil || !bytes.Equal(got, bytes.Join(envelopes, nil)) {
			t.Fatalf("lz4 %v: %d bytes back of %d, %v", useLZ4, len(got), len(bytes.Join(envelopes, nil)), err)
		}
		if useLZ4 && len(stream) >= len(got) {
			t.Errorf("lz4 segments of repetitive data are not smaller: %d >= %d", len(stream), len(got))
		}
		// A flipped bit anywhere is a checksum failure, not garbage.
		for _, at := range []int{1, 7, len(stream) - 2} {
			bad := bytes.Clone(stream)
			bad[at] ^= 0x10
			_, err := io.ReadAll(&segmentReader{r: bytes.NewReader(bad), lz4: useLZ4})
			if pe, ok := err.(*protocolError); !ok || !strings.Contains(pe.msg, "CRC mismatch") {
				t.Errorf("lz4 %v, bit flipped at %d: %v", useLZ4, at, err)
			}
		}
	}
}
