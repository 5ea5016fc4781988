package coordinator

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/partitioner"
)

// A replica's raw entries travel as they are, value for value, in READ and
// RANGE_READ answers; a length no message could hold is refused before it
// sizes anything.
func TestEntriesMessages(t *testing.T) {
	part := partitioner.Murmur3()
	var es []mutation.Entry
	for i, v := range []string{"one", "two", "three"} {
		m := mutation.NewMutation(mutation.TableID{1}, []byte{byte(i)})
		row := mutation.NewRow()
		row.Liveness = mutation.LivenessInfo{Timestamp: int64(i + 1), ExpiresAt: mutation.NoDeletionTime}
		row.Cells = []mutation.Cell{mutation.LiveCell("v", nil, int64(i+1), []byte(v))}
		m.Rows = []mutation.RowUpdate{{Row: row}}
		es = m.AppendEntries(es, part.Token(m.Key))
	}
	got, err := decodeEntries(encodeEntries(es))
	if err != nil || len(got) != len(es) {
		t.Fatalf("entries came back as %d, %v", len(got), err)
	}
	for i := range es {
		if string(got[i].Key) != string(es[i].Key) || got[i].Row.String() != es[i].Row.String() {
			t.Errorf("entry %d: %s, sent %s", i, &got[i], &es[i])
		}
	}
	parts, err := decodeRawPartitions(encodeRawPartitions([]request.RawPartition{{Key: []byte("k"), Entries: es}}))
	if err != nil || len(parts) != 1 || string(parts[0].Key) != "k" || len(parts[0].Entries) != len(es) {
		t.Fatalf("raw partitions came back as %+v, %v", parts, err)
	}
	huge := binary.AppendVarint(nil, 1<<40)
	if _, err := decodeEntries(huge); !errors.Is(err, errShortMessage) {
		t.Errorf("a count of 2^40 entries in a 6-byte message: %v", err)
	}
	if _, err := decodeRawPartitions(huge); !errors.Is(err, errShortMessage) {
		t.Errorf("a count of 2^40 partitions in a 6-byte message: %v", err)
	}
}

// A read's answers agree only when every digest and every further data
// answer match the first data answer: a speculating read can hold two
// data answers, and a stale one must send the read down the mismatch path.
func TestDigestsAgree(t *testing.T) {
	deleted := func(at int64) []mutation.Entry {
		return []mutation.Entry{{Key: []byte{1}, Kind: mutation.PartitionDeletionEntry, Deletion: mutation.DeletionTime{MarkedForDeleteAt: at}}}
	}
	older, newer := deleted(1), deleted(2)
	for _, c := range []struct {
		name    string
		answers []readAnswer
		agree   bool
	}{
		{"one data answer", []readAnswer{{entries: older, data: true}}, true},
		{"a matching digest", []readAnswer{{entries: older, data: true}, {digest: EntriesDigest(older)}}, true},
		{"a digest behind", []readAnswer{{entries: newer, data: true}, {digest: EntriesDigest(older)}}, false},
		{"two equal data answers", []readAnswer{{digest: EntriesDigest(older)}, {entries: older, data: true}, {entries: deleted(1), data: true}}, true},
		{"a second data answer ahead", []readAnswer{{entries: older, data: true}, {digest: EntriesDigest(older)}, {entries: newer, data: true}}, false},
	} {
		if got := digestsAgree(c.answers); got != c.agree {
			t.Errorf("%s: agree %v, want %v", c.name, got, c.agree)
		}
	}
}
