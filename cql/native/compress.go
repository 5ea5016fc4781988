package native

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/golang/snappy"
	"github.com/pierrec/lz4/v4"
)

// compressor is a body compression algorithm negotiated at STARTUP
// (cql-clients.md 1.17): only bodies are compressed, never headers.
type compressor interface {
	name() string
	compress(src []byte) []byte
	// decompress refuses a body that would grow past max bytes.
	decompress(src []byte, max int) ([]byte, error)
}

func compressorNamed(name string) (compressor, bool) {
	switch strings.ToLower(name) {
	case "lz4":
		return lz4Compressor{}, true
	case "snappy":
		return snappyCompressor{}, true
	}
	return nil, false
}

// lz4Compressor: the uncompressed length as a big-endian [int], then one
// raw LZ4 block.
type lz4Compressor struct{}

func (lz4Compressor) name() string { return "lz4" }

func (lz4Compressor) compress(src []byte) []byte {
	dst := make([]byte, 4+lz4.CompressBlockBound(len(src)))
	binary.BigEndian.PutUint32(dst, uint32(len(src)))
	var c lz4.Compressor
	// With a destination of CompressBlockBound bytes a block always fits,
	// incompressible input included.
	n, _ := c.CompressBlock(src, dst[4:])
	return dst[:4+n]
}

func (lz4Compressor) decompress(src []byte, max int) ([]byte, error) {
	if len(src) < 4 {
		return nil, fmt.Errorf("lz4 body of %d bytes has no length", len(src))
	}
	size := int(binary.BigEndian.Uint32(src))
	if size < 0 || size > max {
		return nil, fmt.Errorf("lz4 body would decompress to %d bytes, over the limit of %d", size, max)
	}
	dst := make([]byte, size)
	n, err := lz4.UncompressBlock(src[4:], dst)
	if err != nil {
		return nil, fmt.Errorf("lz4: %w", err)
	}
	if n != size {
		return nil, fmt.Errorf("lz4 body decompressed to %d bytes, not the %d announced", n, size)
	}
	return dst, nil
}

// snappyCompressor: one raw Snappy block.
type snappyCompressor struct{}

func (snappyCompressor) name() string { return "snappy" }

func (snappyCompressor) compress(src []byte) []byte { return snappy.Encode(nil, src) }

func (snappyCompressor) decompress(src []byte, max int) ([]byte, error) {
	size, err := snappy.DecodedLen(src)
	if err != nil {
		return nil, fmt.Errorf("snappy: %w", err)
	}
	if size > max {
		return nil, fmt.Errorf("snappy body would decompress to %d bytes, over the limit of %d", size, max)
	}
	return snappy.Decode(nil, src)
}
