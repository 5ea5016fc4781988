package streaming

import (
	"bytes"
	"testing"

	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/sstable"
	"github.com/sibyldb/sibyl/storage"
)

// FuzzDecoders feeds every streaming decoder the same bytes: none
// panics, and what one accepts encodes back to what it read.
func FuzzDecoders(f *testing.F) {
	f.Add(prepareRequest{session: 7, operation: "Rebuild", tables: []TableSpans{{Table: mutation.TableID{1}, Spans: []storage.KeySpan{{From: []byte{1}}, {}}}}}.encode())
	secs, _ := encodeSections([]sectionInfo{{table: mutation.TableID{2}, size: 10}, {table: mutation.TableID{3}, whole: true, size: 5,
		meta: sstable.Metadata{FormatVersion: 1, DataSize: 5}, filter: []byte{0, 0, 0, 0}}})
	f.Add(secs)
	f.Add(chunkRequest{session: 1, section: 2, offset: 3}.encode())
	f.Add(pullRequest{operation: "Unbootstrap", source: "127.0.0.1", tables: []TableSpans{{Table: mutation.TableID{4}, Spans: []storage.KeySpan{{To: []byte{9}}}}}}.encode())
	f.Add(Result{Sections: 3, Whole: 1, Bytes: 1 << 40}.encode())
	f.Add(chunk{offset: 4, data: []byte("abc"), last: true}.encode())
	f.Add(appendEntry(nil, &mutation.Entry{Key: []byte{1, 2, 3}, Kind: mutation.PartitionDeletionEntry}))
	f.Fuzz(func(t *testing.T, b []byte) {
		if p, err := decodePrepare(b); err == nil {
			if again, err := decodePrepare(p.encode()); err != nil || again.session != p.session || len(again.tables) != len(p.tables) {
				t.Fatalf("a prepare request does not round-trip: %v", err)
			}
		}
		if s, err := decodeSections(b); err == nil {
			out, err := encodeSections(s)
			if err != nil {
				t.Fatal(err)
			}
			if again, err := decodeSections(out); err != nil || len(again) != len(s) {
				t.Fatalf("sections do not round-trip: %v", err)
			}
		}
		if p, err := decodePull(b); err == nil {
			if again, err := decodePull(p.encode()); err != nil || again.source != p.source || again.operation != p.operation || len(again.tables) != len(p.tables) {
				t.Fatalf("a pull request does not round-trip: %v", err)
			}
		}
		if r, err := decodeResult(b); err == nil {
			if again, err := decodeResult(r.encode()); err != nil || again != r {
				t.Fatalf("a pull's answer does not round-trip: %v", err)
			}
		}
		if c, err := decodeChunkRequest(b); err == nil && !bytes.Equal(c.encode(), b) {
			t.Fatalf("a chunk request does not round-trip")
		}
		if c, err := decodeChunk(b); err == nil && !bytes.Equal(c.encode(), b) {
			t.Fatalf("a chunk does not round-trip")
		}
		rest := b
		for len(rest) > 0 {
			_, _, next, ok, err := nextEntry(rest)
			if err != nil || !ok {
				break
			}
			if len(next) >= len(rest) {
				t.Fatal("an entry record took no bytes")
			}
			rest = next
		}
	})
}
