package memtable

import (
	"bytes"

	"github.com/sibyldb/sibyl/mutation"
)

// batchSize is how many entries an iterator copies out per lock hold.
const batchSize = 64

// Iter is a memtable iterator (mutation.Iterator).
type Iter struct {
	m            *Memtable
	lower, upper []byte // nil: unbounded
	batch        []rawEntry
	pos          int
	err          error
	forward      bool
	more         bool // the tree may hold entries beyond the batch, in its direction
	state        iterState
}

type iterState uint8

const (
	atEntry iterState = iota
	beforeFirst
	afterLast
)

var _ mutation.Iterator = (*Iter)(nil)

// NewIter returns an iterator over the entries with keys in [lower, upper);
// nil bounds are open.
func (m *Memtable) NewIter(lower, upper []byte) *Iter {
	return &Iter{m: m, lower: lower, upper: upper, state: beforeFirst}
}

func (it *Iter) inUpper(k []byte) bool { return it.upper == nil || bytes.Compare(k, it.upper) < 0 }
func (it *Iter) inLower(k []byte) bool { return it.lower == nil || bytes.Compare(k, it.lower) >= 0 }

// fillForward loads the entries from key on (strictly after it when
// exclusive); a nil key starts at the lower bound. It walks the shards in
// order from key's, each under its own read lock.
func (it *Iter) fillForward(key []byte, exclusive bool) *mutation.Entry {
	it.batch, it.pos, it.forward, it.more = it.batch[:0], 0, true, false
	if key == nil {
		key = it.lower
	}
	stop := false // past the upper bound, or the batch is full
	var sh *shard
	visit := func(i item) bool {
		if exclusive && bytes.Equal(i.key, key) {
			return true
		}
		if !it.inUpper(i.key) {
			stop = true
			return false
		}
		if len(it.batch) == batchSize {
			it.more, stop = true, true
			return false
		}
		it.batch = append(it.batch, sh.arena.raw(i.key))
		return true
	}
	last := shardCount - 1
	if it.upper != nil {
		last = shardOf(it.upper)
	}
	pivot := pivotItem(key)
	for s := shardOf(key); s <= last && !stop; s++ {
		sh = &it.m.shards[s]
		sh.RLock()
		if key == nil {
			sh.tree.Ascend(visit)
		} else {
			sh.tree.AscendGreaterOrEqual(pivot, visit)
		}
		sh.RUnlock()
	}
	return it.current(afterLast)
}

// fillBackward loads the entries before key (at or before it when
// inclusive); a nil key starts at the upper bound. It walks the shards in
// reverse order from key's.
func (it *Iter) fillBackward(key []byte, inclusive bool) *mutation.Entry {
	it.batch, it.pos, it.forward, it.more = it.batch[:0], 0, false, false
	if key == nil {
		key, inclusive = it.upper, false
	}
	stop := false
	var sh *shard
	visit := func(i item) bool {
		if !inclusive && key != nil && bytes.Equal(i.key, key) {
			return true
		}
		if !it.inLower(i.key) {
			stop = true
			return false
		}
		if len(it.batch) == batchSize {
			it.more, stop = true, true
			return false
		}
		it.batch = append(it.batch, sh.arena.raw(i.key))
		return true
	}
	first, start := 0, shardCount-1
	if it.lower != nil {
		first = shardOf(it.lower)
	}
	if key != nil {
		start = shardOf(key)
	}
	pivot := pivotItem(key)
	for s := start; s >= first && !stop; s-- {
		sh = &it.m.shards[s]
		sh.RLock()
		if key == nil {
			sh.tree.Descend(visit)
		} else {
			sh.tree.DescendLessOrEqual(pivot, visit)
		}
		sh.RUnlock()
	}
	return it.current(beforeFirst)
}

func (it *Iter) current(ifNone iterState) *mutation.Entry {
	if it.pos < len(it.batch) {
		it.state = atEntry
		return it.decode()
	}
	it.state = ifNone
	return nil
}

// decode returns the entry at it.pos, freshly decoded: entries stay valid
// for as long as callers hold them, like an SSTable iterator's.
func (it *Iter) decode() *mutation.Entry {
	e, err := it.batch[it.pos].decode()
	if err != nil {
		it.err, it.state, it.batch = err, afterLast, it.batch[:0]
		return nil
	}
	return e
}

// SeekGE implements mutation.Iterator.
func (it *Iter) SeekGE(key []byte) *mutation.Entry {
	if it.lower != nil && bytes.Compare(key, it.lower) < 0 {
		key = it.lower
	}
	return it.fillForward(key, false)
}

// First implements mutation.Iterator.
func (it *Iter) First() *mutation.Entry { return it.fillForward(nil, false) }

// Next implements mutation.Iterator.
func (it *Iter) Next() *mutation.Entry {
	switch {
	case it.state == beforeFirst:
		return it.First()
	case it.state == afterLast:
		return nil
	case !it.forward:
		return it.fillForward(it.batch[it.pos].key, true)
	}
	it.pos++
	if it.pos < len(it.batch) {
		return it.decode()
	}
	if !it.more {
		it.state = afterLast
		return nil
	}
	return it.fillForward(it.batch[len(it.batch)-1].key, true)
}

// SeekLT implements mutation.Iterator.
func (it *Iter) SeekLT(key []byte) *mutation.Entry {
	if it.upper != nil && bytes.Compare(key, it.upper) > 0 {
		key = it.upper
	}
	return it.fillBackward(key, false)
}

// Last implements mutation.Iterator.
func (it *Iter) Last() *mutation.Entry { return it.fillBackward(nil, false) }

// Prev implements mutation.Iterator.
func (it *Iter) Prev() *mutation.Entry {
	switch {
	case it.state == afterLast:
		return it.Last()
	case it.state == beforeFirst:
		return nil
	case it.forward:
		return it.fillBackward(it.batch[it.pos].key, false)
	}
	it.pos++
	if it.pos < len(it.batch) {
		return it.decode()
	}
	if !it.more {
		it.state = beforeFirst
		return nil
	}
	return it.fillBackward(it.batch[len(it.batch)-1].key, false)
}

// Error implements mutation.Iterator. A memtable iterator fails only on an
// arena record that does not decode, which is a bug.
func (it *Iter) Error() error { return it.err }

// Close implements mutation.Iterator.
func (it *Iter) Close() error {
	it.batch = nil
	return nil
}
