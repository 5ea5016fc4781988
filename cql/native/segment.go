package native

import (
	"encoding/binary"
	"hash/crc32"
	"io"

	"github.com/pierrec/lz4/v4"
)

// Protocol version 5 wraps envelopes in checksummed segments once the
// connection is started (cql-clients.md 1.18): a little-endian header (3
// bytes: a 17-bit payload length and the self-contained bit; with LZ4, 5
// bytes: the payload length, the uncompressed length, 0 when the payload
// is stored as is, and the self-contained bit), the header's CRC24, the
// payload, and the payload's CRC32. A segment holds whole envelopes
// (self-contained) or a part of one too big for a segment.

const (
	maxSegmentPayload = 128<<10 - 1
	crc24Init         = 0x875060
	crc24Poly         = 0x1974F0B
)

// crc32Seed is the CRC32 of the bytes FA 2D 55 CA, from which a segment's
// payload checksum starts.
var crc32Seed = crc32.ChecksumIEEE([]byte{0xFA, 0x2D, 0x55, 0xCA})

// crc24 checksums the n low bytes of a segment header, least significant
// byte first.
func crc24(v uint64, n int) uint32 {
	crc := uint32(crc24Init)
	for i := 0; i < n; i++ {
		crc ^= uint32(v&0xFF) << 16
		v >>= 8
		for j := 0; j < 8; j++ {
			crc <<= 1
			if crc&0x1000000 != 0 {
				crc ^= crc24Poly
			}
		}
	}
	return crc & 0xFFFFFF
}

func payloadCRC(p []byte) uint32 { return crc32.Update(crc32Seed, crc32.IEEETable, p) }

func putUintLE(dst []byte, v uint64, n int) {
	for i := 0; i < n; i++ {
		dst[i] = byte(v >> (8 * i))
	}
}

func uintLE(b []byte) uint64 {
	var v uint64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// segmentReader turns the segments of a version 5 connection back into
// the stream of envelopes they carry.
type segmentReader struct {
	r       io.Reader
	lz4     bool
	pending []byte // payload not yet read
	hdr     [8]byte
}

func (s *segmentReader) Read(p []byte) (int, error) {
	for len(s.pending) == 0 {
		if err := s.next(); err != nil {
			return 0, err
		}
	}
	n := copy(p, s.pending)
	s.pending = s.pending[n:]
	return n, nil
}

func (s *segmentReader) next() error {
	hl := 3
	if s.lz4 {
		hl = 5
	}
	if _, err := io.ReadFull(s.r, s.hdr[:hl+3]); err != nil {
		return err
	}
	h := uintLE(s.hdr[:hl])
	if got, want := crc24(h, hl), uint32(uintLE(s.hdr[hl:hl+3])); got != want {
		return protocolErrorf(true, "CRC mismatch on a segment header: received %06x, computed %06x", want, got)
	}
	length := int(h & maxSegmentPayload)
	uncompressed := 0
	if s.lz4 {
		uncompressed = int(h >> 17 & maxSegmentPayload)
	}
	body := make([]byte, length+4)
	if _, err := io.ReadFull(s.r, body); err != nil {
		return err
	}
	payload := body[:length]
	if got, want := payloadCRC(payload), binary.LittleEndian.Uint32(body[length:]); got != want {
		return protocolErrorf(true, "CRC mismatch on a segment payload: received %08x, computed %08x", want, got)
	}
	if uncompressed > 0 {
		out := make([]byte, uncompressed)
		n, err := lz4.UncompressBlock(payload, out)
		if err != nil || n != uncompressed {
			return protocolErrorf(true, "Invalid LZ4 segment: %v", err)
		}
		payload = out
	}
	s.pending = payload
	return nil
}

// appendSegments wraps envelopes in segments: whole envelopes packed into
// self-contained segments, and an envelope too big for one segment split
// over several that are not.
func appendSegments(dst []byte, envelopes [][]byte, useLZ4 bool) []byte {
	var batch []byte
	flush := func(selfContained bool) {
		if len(batch) > 0 {
			dst = appendSegment(dst, batch, selfContained, useLZ4)
			batch = batch[:0]
		}
	}
	for _, e := range envelopes {
		if len(e) > maxSegmentPayload {
			flush(true)
			for len(e) > 0 {
				n := min(len(e), maxSegmentPayload)
				dst = appendSegment(dst, e[:n], false, useLZ4)
				e = e[n:]
			}
			continue
		}
		if len(batch)+len(e) > maxSegmentPayload {
			flush(true)
		}
		batch = append(batch, e...)
	}
	flush(true)
	return dst
}

func appendSegment(dst, payload []byte, selfContained, useLZ4 bool) []byte {
	hl := 3
	h := uint64(len(payload))
	flagShift := 17
	if useLZ4 {
		hl, flagShift = 5, 34
		compressed := make([]byte, lz4.CompressBlockBound(len(payload)))
		var c lz4.Compressor
		if n, _ := c.CompressBlock(payload, compressed); n > 0 && n < len(payload) {
			h = uint64(n) | uint64(len(payload))<<17
			payload = compressed[:n]
		}
	}
	if selfContained {
		h |= 1 << flagShift
	}
	var hdr [8]byte
	putUintLE(hdr[:], h, hl)
	putUintLE(hdr[hl:], uint64(crc24(h, hl)), 3)
	dst = append(dst, hdr[:hl+3]...)
	dst = append(dst, payload...)
	return binary.LittleEndian.AppendUint32(dst, payloadCRC(payload))
}
