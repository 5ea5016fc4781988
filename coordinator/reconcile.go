package coordinator

import (
	"bytes"
	"crypto/md5"
	"slices"

	"github.com/sibyldb/sibyl/mutation"
)

// The pure half of a read across replicas: digests, merging their
// answers with the one reconcile (mutation.MergeEntries), and what each
// replica lacks of the merged answer.

// EntriesDigest is the digest of a partition's entries that a replica
// answers instead of them (and repair compares): equal entries give
// equal digests.
func EntriesDigest(es []mutation.Entry) []byte {
	sum := md5.Sum(encodeEntries(es))
	return sum[:]
}

// readAnswer is a replica's answer to a read: its entries, or their
// digest.
type readAnswer struct {
	entries []mutation.Entry
	digest  []byte
	data    bool // entries holds the data (else digest holds the digest)
}

// digestsAgree reports whether every answer matches the first answer
// with data: each digest, and the entries of any other data answer (a
// speculating read may have two).
func digestsAgree(answers []readAnswer) bool {
	first := slices.IndexFunc(answers, func(a readAnswer) bool { return a.data })
	var want []byte
	for i, a := range answers {
		if i == first {
			continue
		}
		if want == nil {
			want = EntriesDigest(answers[first].entries)
		}
		got := a.digest
		if a.data {
			got = EntriesDigest(a.entries)
		}
		if !bytes.Equal(got, want) {
			return false
		}
	}
	return true
}

// mergeEntries merges replicas' entries of one partition, each in key
// order, into one list in key order: entries under one key reconcile.
func mergeEntries(lists [][]mutation.Entry) []mutation.Entry {
	if len(lists) == 1 {
		return lists[0] // one replica's answer, in key order already
	}
	var out []mutation.Entry
	for _, l := range lists {
		out = append(out, l...)
	}
	slices.SortStableFunc(out, func(a, b mutation.Entry) int { return bytes.Compare(a.Key, b.Key) })
	merged := out[:0]
	for i := range out {
		if k := len(merged); k > 0 && bytes.Equal(merged[k-1].Key, out[i].Key) {
			merged[k-1] = *mutation.MergeEntries(&merged[k-1], &out[i])
			continue
		}
		merged = append(merged, out[i])
	}
	return merged
}

// missingEntries are the merged entries a replica's answer lacks or holds
// in an older form.
func missingEntries(have, merged []mutation.Entry) []mutation.Entry {
	var out []mutation.Entry
	i := 0
	for _, e := range merged {
		for i < len(have) && bytes.Compare(have[i].Key, e.Key) < 0 {
			i++
		}
		if i < len(have) && bytes.Equal(have[i].Key, e.Key) &&
			bytes.Equal(mutation.AppendEntryValue(nil, &have[i]), mutation.AppendEntryValue(nil, &e)) {
			continue
		}
		out = append(out, e)
	}
	return out
}
