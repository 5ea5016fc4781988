package sstable

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/sibyldb/sibyl/internal/durable"
	"github.com/sibyldb/sibyl/internal/invariants"
)

// An index file holds one secondary index of one SSTable: every term the
// SSTable's entries hold for the index, each with the partition prefix
// (token and partition key) of an entry that holds it, sorted by term and
// then prefix. It is written after its SSTable is published and read
// whole when the SSTable opens; an SSTable without one (written before
// the index existed, or by an interrupted build) is read without it.
//
//	"SBIX" | version | count (uvarint) | count × (term, prefix), each a
//	uvarint length and bytes | [version 2: the attachment, a uvarint
//	length and bytes] | CRC-32C (Castagnoli) of all before, 4 bytes
//
// Version 2 carries an attachment its writer reads the postings through
// (a vector index's graph, whose nodes are the postings in order).

const indexMagic = "SBIX"

// IndexFileName is the file of index name of generation gen. Index names
// are word characters ([A-Za-z0-9_]), as Cassandra requires.
func IndexFileName(gen uint64, name string) string { return fmt.Sprintf("sb-%d-SAI_%s.db", gen, name) }

// Posting is one term of an index with a partition prefix that holds it.
type Posting struct{ Term, Prefix []byte }

// ComparePostings orders postings by term, then prefix.
func ComparePostings(a, b Posting) int {
	if c := bytes.Compare(a.Term, b.Term); c != 0 {
		return c
	}
	return bytes.Compare(a.Prefix, b.Prefix)
}

// Index is an SSTable's index, read into memory.
type Index struct {
	postings   []Posting // sorted, without repeats
	attachment []byte    // nil in version 1
}

// SortPostings sorts postings as an index file holds them, without
// repeats.
func SortPostings(postings []Posting) []Posting {
	slices.SortFunc(postings, ComparePostings)
	return slices.CompactFunc(postings, func(a, b Posting) bool { return ComparePostings(a, b) == 0 })
}

// WriteIndex writes the index file of index name of generation gen in dir,
// replacing any; postings are sorted and repeats dropped first. A non-nil
// attachment is written with them (version 2); it must describe the
// postings as SortPostings leaves them.
func WriteIndex(fs vfs.FS, dir string, gen uint64, name string, postings []Posting, attachment []byte) error {
	postings = SortPostings(postings)
	version := byte(1)
	if attachment != nil {
		version = 2
	}
	b := append([]byte(indexMagic), version)
	b = binary.AppendUvarint(b, uint64(len(postings)))
	for _, p := range postings {
		b = binary.AppendUvarint(b, uint64(len(p.Term)))
		b = append(b, p.Term...)
		b = binary.AppendUvarint(b, uint64(len(p.Prefix)))
		b = append(b, p.Prefix...)
	}
	if attachment != nil {
		b = binary.AppendUvarint(b, uint64(len(attachment)))
		b = append(b, attachment...)
	}
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(b, crcTable))
	if err := durable.ReplaceFile(fs, fs.PathJoin(dir, IndexFileName(gen, name)), b); err != nil {
		return fmt.Errorf("sstable: write index %s of generation %d: %w", name, gen, err)
	}
	return nil
}

// ReadIndex reads an index file; found is false when there is none.
func ReadIndex(fs vfs.FS, dir string, gen uint64, name string) (idx *Index, found bool, err error) {
	path := fs.PathJoin(dir, IndexFileName(gen, name))
	f, err := fs.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, false, nil
		}
		return nil, false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, true, err
	}
	b := make([]byte, st.Size())
	if _, err := f.ReadAt(b, 0); err != nil {
		return nil, true, fmt.Errorf("sstable: read %s: %w", path, err)
	}
	idx, err = decodeIndex(b)
	if err != nil {
		return nil, true, fmt.Errorf("sstable: %s: %w", path, err)
	}
	return idx, true, nil
}

func decodeIndex(b []byte) (*Index, error) {
	if len(b) < len(indexMagic)+1+4 || string(b[:len(indexMagic)]) != indexMagic {
		return nil, invariants.Corruptf("not an index file")
	}
	body, sum := b[:len(b)-4], binary.BigEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, crcTable) != sum {
		return nil, invariants.Corruptf("index checksum mismatch")
	}
	version := body[len(indexMagic)]
	if version != 1 && version != 2 {
		return nil, invariants.Corruptf("index version %d", version)
	}
	rest := body[len(indexMagic)+1:]
	next := func() ([]byte, bool) {
		n, k := binary.Uvarint(rest)
		if k <= 0 || uint64(len(rest)-k) < n {
			return nil, false
		}
		v := rest[k : k+int(n) : k+int(n)]
		rest = rest[k+int(n):]
		return v, true
	}
	count, k := binary.Uvarint(rest)
	if k <= 0 || count > uint64(len(rest)) {
		return nil, invariants.Corruptf("index count")
	}
	rest = rest[k:]
	idx := &Index{postings: make([]Posting, 0, count)}
	for i := uint64(0); i < count; i++ {
		term, ok1 := next()
		prefix, ok2 := next()
		if !ok1 || !ok2 {
			return nil, invariants.Corruptf("index posting %d of %d", i, count)
		}
		p := Posting{Term: term, Prefix: prefix}
		if n := len(idx.postings); n > 0 && ComparePostings(idx.postings[n-1], p) >= 0 {
			return nil, invariants.Corruptf("index postings out of order at %d", i)
		}
		idx.postings = append(idx.postings, p)
	}
	if version == 2 {
		a, ok := next()
		if !ok {
			return nil, invariants.Corruptf("index attachment")
		}
		idx.attachment = a
	}
	if len(rest) != 0 {
		return nil, invariants.Corruptf("index has %d trailing bytes", len(rest))
	}
	return idx, nil
}

// Prefixes calls fn with the prefix of every posting whose term lies
// between lo and hi (nil: open), each bound included when its flag says.
func (idx *Index) Prefixes(lo, hi []byte, loIncl, hiIncl bool, fn func(prefix []byte)) {
	i := 0
	if lo != nil {
		i = sort.Search(len(idx.postings), func(i int) bool {
			c := bytes.Compare(idx.postings[i].Term, lo)
			return c > 0 || c == 0 && loIncl
		})
	}
	for ; i < len(idx.postings); i++ {
		p := idx.postings[i]
		if hi != nil {
			if c := bytes.Compare(p.Term, hi); c > 0 || c == 0 && !hiIncl {
				return
			}
		}
		fn(p.Prefix)
	}
}

// Postings are the index's postings, sorted; the caller must not modify
// them.
func (idx *Index) Postings() []Posting { return idx.postings }

// Attachment is what the writer attached, or nil.
func (idx *Index) Attachment() []byte { return idx.attachment }

// Len is the number of postings.
func (idx *Index) Len() int { return len(idx.postings) }

// indexGeneration is the generation an index file's name is of.
func indexGeneration(name string) (uint64, bool) {
	if !strings.HasPrefix(name, "sb-") || !strings.HasSuffix(name, ".db") {
		return 0, false
	}
	rest := name[len("sb-"):]
	dash := strings.Index(rest, "-SAI_")
	if dash <= 0 {
		return 0, false
	}
	g, err := strconv.ParseUint(rest[:dash], 10, 64)
	return g, err == nil
}

// RemoveIndex deletes an index's file of generation gen, if there is one.
func RemoveIndex(fs vfs.FS, dir string, gen uint64, name string) error {
	err := fs.Remove(fs.PathJoin(dir, IndexFileName(gen, name)))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// indexFilesOf are the index files of generation gen among names.
func indexFilesOf(names []string, gen uint64) []string {
	prefix := fmt.Sprintf("sb-%d-SAI_", gen)
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, prefix) && strings.HasSuffix(n, ".db") {
			out = append(out, n)
		}
	}
	return out
}
