package mutation

import (
	"bytes"
	"fmt"

	"github.com/sibyldb/sibyl/partitioner"
)

// Engine keys.
//
// Every entry of a table, in memtables and SSTables alike, is found under
//
//	token (fixed width, byte-comparable) | escaped partition key | 0x00 0x01 | kind | rest
//
// where the partition key escapes 0x00 as 0x00 0xFF so that the terminator
// 0x00 0x01 sorts below any continuation; hence partitions sort by token and
// then by key bytes unsigned, a proper prefix first (Cassandra's order).
// Inside a partition the kinds sort in the order a reader needs them:
//
//	0x10 partition deletion        rest: empty
//	0x20 range tombstone           rest: escaped start bound | 0x00 0x01 | end bound
//	0x30 static row                rest: empty
//	0x40 clustering row            rest: clustering encoding
//
// A clustering row's encoding is empty only in a table without clustering
// columns: each of its partitions holds that one row, and nothing after it.
type EntryKind uint8

// Entry kinds, in their order within a partition.
const (
	PartitionDeletionEntry EntryKind = 0x10
	RangeTombstoneEntry    EntryKind = 0x20
	StaticRowEntry         EntryKind = 0x30
	RowEntry               EntryKind = 0x40
)

func (k EntryKind) String() string {
	switch k {
	case PartitionDeletionEntry:
		return "partition-deletion"
	case RangeTombstoneEntry:
		return "range-tombstone"
	case StaticRowEntry:
		return "static"
	case RowEntry:
		return "row"
	}
	return fmt.Sprintf("kind(0x%02x)", uint8(k))
}

func appendEscaped(dst, b []byte) []byte {
	for {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			dst = append(dst, b...)
			break
		}
		dst = append(dst, b[:i+1]...)
		dst = append(dst, 0xFF)
		b = b[i+1:]
	}
	return append(dst, 0x00, 0x01)
}

// escapedLen is the length appendEscaped writes for b.
func escapedLen(b []byte) int { return len(b) + bytes.Count(b, []byte{0}) + 2 }

// readEscaped undoes appendEscaped, returning the bytes and what follows.
// The value aliases src unless src held escaped zero bytes.
func readEscaped(src []byte) (value, rest []byte, err error) {
	var copied []byte // non-nil once an escape forced a copy
	for i := 0; i < len(src); i++ {
		if src[i] != 0 {
			if copied != nil {
				copied = append(copied, src[i])
			}
			continue
		}
		if i+1 >= len(src) {
			return nil, nil, fmt.Errorf("mutation: escaped bytes cut short")
		}
		switch src[i+1] {
		case 0x01:
			if copied != nil {
				return copied, src[i+2:], nil
			}
			return src[:i:i], src[i+2:], nil
		case 0xFF:
			if copied == nil {
				copied = append(make([]byte, 0, len(src)), src[:i]...)
			}
			copied = append(copied, 0)
			i++
		default:
			return nil, nil, fmt.Errorf("mutation: bad escape 0x00 0x%02x", src[i+1])
		}
	}
	return nil, nil, fmt.Errorf("mutation: escaped bytes have no terminator")
}

// AppendPartitionPrefix appends the part of an engine key shared by every
// entry of one partition.
func AppendPartitionPrefix(dst []byte, tok partitioner.Token, key []byte) []byte {
	dst = tok.AppendBytes(dst)
	return appendEscaped(dst, key)
}

// AppendEntryKey appends the engine key of an entry of the partition whose
// prefix is given. rest is the clustering for a row; for a range tombstone
// use AppendRangeTombstoneKey.
func AppendEntryKey(dst, prefix []byte, kind EntryKind, clustering []byte) []byte {
	dst = append(dst, prefix...)
	dst = append(dst, byte(kind))
	return append(dst, clustering...)
}

// AppendRangeTombstoneKey appends the engine key of a range tombstone.
func AppendRangeTombstoneKey(dst, prefix, start, end []byte) []byte {
	dst = append(dst, prefix...)
	dst = append(dst, byte(RangeTombstoneEntry))
	dst = appendEscaped(dst, start)
	return append(dst, end...)
}

// KeyParts is an engine key taken apart. Its slices alias the key.
type KeyParts struct {
	Token        []byte // byte-comparable token
	PartitionKey []byte // may be a copy when the key held escaped zero bytes
	Prefix       []byte // the partition prefix (token through terminator)
	Kind         EntryKind
	Clustering   []byte // rows: the clustering; range tombstones: the start bound
	End          []byte // range tombstones: the end bound
}

// ParseKey takes an engine key apart; tokenLen is the partitioner's token
// width in bytes.
func ParseKey(key []byte, tokenLen int) (KeyParts, error) {
	var p KeyParts
	if len(key) < tokenLen+3 {
		return p, fmt.Errorf("mutation: engine key of %d bytes is too short", len(key))
	}
	p.Token = key[:tokenLen]
	pk, rest, err := readEscaped(key[tokenLen:])
	if err != nil {
		return p, err
	}
	p.PartitionKey = pk
	p.Prefix = key[:len(key)-len(rest)]
	if len(rest) == 0 {
		return p, fmt.Errorf("mutation: engine key has no entry kind")
	}
	p.Kind = EntryKind(rest[0])
	rest = rest[1:]
	switch p.Kind {
	case PartitionDeletionEntry, StaticRowEntry:
		if len(rest) != 0 {
			return p, fmt.Errorf("mutation: %s key has %d trailing bytes", p.Kind, len(rest))
		}
	case RowEntry:
		p.Clustering = rest
	case RangeTombstoneEntry:
		start, end, err := readEscaped(rest)
		if err != nil {
			return p, err
		}
		p.Clustering, p.End = start, end
	default:
		return p, fmt.Errorf("mutation: unknown entry kind 0x%02x", uint8(p.Kind))
	}
	return p, nil
}

// PartitionPrefixLen returns the length of the partition prefix of an engine
// key, which is how readers tell where one partition ends.
func PartitionPrefixLen(key []byte, tokenLen int) (int, error) {
	if len(key) < tokenLen {
		return 0, fmt.Errorf("mutation: engine key of %d bytes is too short", len(key))
	}
	for i := tokenLen; i+1 < len(key); i++ {
		if key[i] != 0 {
			continue
		}
		if key[i+1] == 0x01 {
			return i + 2, nil
		}
		i++ // skip the escaped zero
	}
	return 0, fmt.Errorf("mutation: engine key has no partition key terminator")
}

// PartitionBounds returns the prefix of the partition with the given
// token and key, and its PartitionUpperBound, in one allocation: a point
// read needs both.
func PartitionBounds(tok partitioner.Token, key []byte) (prefix, upper []byte) {
	const longestToken = 16
	n := longestToken + escapedLen(key)
	buf := AppendPartitionPrefix(make([]byte, 0, 2*n+1), tok, key)
	prefix = buf[:len(buf):len(buf)]
	upper = append(append(buf[len(buf):len(buf)], prefix...), 0xFF)
	return prefix, upper
}

// PartitionUpperBound returns the smallest key above every entry of the
// partition with the given prefix.
func PartitionUpperBound(prefix []byte) []byte {
	return append(prefix[:len(prefix):len(prefix)], 0xFF)
}
