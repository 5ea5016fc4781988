package clients

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/gocql/gocql"
	"github.com/pierrec/lz4/v4"
)

// lz4Compressor is gocql's LZ4 compressor (its gocql/lz4 module is not
// published separately): a big-endian length, then one LZ4 block.
type lz4Compressor struct{}

func (lz4Compressor) Name() string { return "lz4" }

func (lz4Compressor) Encode(b []byte) ([]byte, error) {
	out := make([]byte, 4+lz4.CompressBlockBound(len(b)))
	binary.BigEndian.PutUint32(out, uint32(len(b)))
	var c lz4.Compressor
	n, err := c.CompressBlock(b, out[4:])
	return out[:4+n], err
}

func (lz4Compressor) Decode(b []byte) ([]byte, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("lz4: short body")
	}
	out := make([]byte, binary.BigEndian.Uint32(b))
	n, err := lz4.UncompressBlock(b[4:], out)
	return out[:n], err
}

// TestCompression runs statements over connections compressed with
// Snappy and with LZ4, with values large enough to compress.
func TestCompression(t *testing.T) {
	for _, comp := range []gocql.Compressor{gocql.SnappyCompressor{}, lz4Compressor{}} {
		t.Run(comp.Name(), func(t *testing.T) {
			_, cluster := startNode(t)
			cluster.Compressor = comp
			s := session(t, cluster)
			mustExec(t, s, createKeyspace, "CREATE TABLE ks.kv (k int PRIMARY KEY, v text)")
			big := strings.Repeat("sibyl ", 10_000)
			for k := 0; k < 20; k++ {
				if err := s.Query("INSERT INTO ks.kv (k, v) VALUES (?, ?)", k, fmt.Sprint(k)+big).Exec(); err != nil {
					t.Fatal(err)
				}
			}
			it := s.Query("SELECT k, v FROM ks.kv").PageSize(7).Iter()
			var k, n int
			var v string
			for it.Scan(&k, &v) {
				if v != fmt.Sprint(k)+big {
					t.Fatalf("row %d: %d bytes back", k, len(v))
				}
				n++
			}
			if err := it.Close(); err != nil || n != 20 {
				t.Fatalf("%d rows, %v", n, err)
			}
		})
	}
}
