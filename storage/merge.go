package storage

import (
	"bytes"
	"errors"

	"github.com/sibyldb/sibyl/mutation"
)

// mergingIter merges several sources into one ordered stream: entries
// under the same key in several sources are merged with
// mutation.MergeEntries, so each key appears once. Sources are few (the
// memtables and the SSTables that may hold the data), so the next key is
// found by a linear scan rather than a heap.
type mergingIter struct {
	children []mergeChild
	forward  bool
	current  *mutation.Entry
	err      error
}

type mergeChild struct {
	it  mutation.Iterator
	cur *mutation.Entry
}

var _ mutation.Iterator = (*mergingIter)(nil)

func newMergingIter(its []mutation.Iterator) *mergingIter {
	m := &mergingIter{children: make([]mergeChild, len(its))}
	for i, it := range its {
		m.children[i].it = it
	}
	return m
}

// settle picks the smallest (forward) or largest key among the children
// and merges every child positioned there.
func (m *mergingIter) settle() *mutation.Entry {
	m.current = nil
	var best []byte
	for i := range m.children {
		c := &m.children[i]
		if c.cur == nil {
			if err := c.it.Error(); err != nil && m.err == nil {
				m.err = err
			}
			continue
		}
		if best == nil {
			best = c.cur.Key
			continue
		}
		cmp := bytes.Compare(c.cur.Key, best)
		if (m.forward && cmp < 0) || (!m.forward && cmp > 0) {
			best = c.cur.Key
		}
	}
	if m.err != nil || best == nil {
		return nil
	}
	for i := range m.children {
		c := &m.children[i]
		if c.cur == nil || !bytes.Equal(c.cur.Key, best) {
			continue
		}
		if m.current == nil {
			m.current = c.cur
		} else {
			m.current = mutation.MergeEntries(m.current, c.cur)
		}
	}
	return m.current
}

func (m *mergingIter) each(move func(it mutation.Iterator) *mutation.Entry, forward bool) *mutation.Entry {
	m.forward = forward
	for i := range m.children {
		m.children[i].cur = move(m.children[i].it)
	}
	return m.settle()
}

// SeekGE implements mutation.Iterator.
func (m *mergingIter) SeekGE(key []byte) *mutation.Entry {
	return m.each(func(it mutation.Iterator) *mutation.Entry { return it.SeekGE(key) }, true)
}

// First implements mutation.Iterator.
func (m *mergingIter) First() *mutation.Entry {
	return m.each(mutation.Iterator.First, true)
}

// SeekLT implements mutation.Iterator.
func (m *mergingIter) SeekLT(key []byte) *mutation.Entry {
	return m.each(func(it mutation.Iterator) *mutation.Entry { return it.SeekLT(key) }, false)
}

// Last implements mutation.Iterator.
func (m *mergingIter) Last() *mutation.Entry {
	return m.each(mutation.Iterator.Last, false)
}

// Next implements mutation.Iterator.
func (m *mergingIter) Next() *mutation.Entry {
	if m.err != nil {
		return nil
	}
	if m.current == nil {
		if !m.forward { // before the first entry (or never positioned)
			return m.First()
		}
		return nil
	}
	key := m.current.Key
	if !m.forward {
		return m.each(func(it mutation.Iterator) *mutation.Entry { return it.SeekGE(append(key[:len(key):len(key)], 0)) }, true)
	}
	for i := range m.children {
		c := &m.children[i]
		if c.cur != nil && bytes.Equal(c.cur.Key, key) {
			c.cur = c.it.Next()
		}
	}
	return m.settle()
}

// Prev implements mutation.Iterator.
func (m *mergingIter) Prev() *mutation.Entry {
	if m.err != nil {
		return nil
	}
	if m.current == nil {
		if m.forward { // after the last entry
			return m.Last()
		}
		return nil
	}
	key := m.current.Key
	if m.forward {
		return m.each(func(it mutation.Iterator) *mutation.Entry { return it.SeekLT(key) }, false)
	}
	for i := range m.children {
		c := &m.children[i]
		if c.cur != nil && bytes.Equal(c.cur.Key, key) {
			c.cur = c.it.Prev()
		}
	}
	return m.settle()
}

// Error implements mutation.Iterator.
func (m *mergingIter) Error() error { return m.err }

// Close implements mutation.Iterator.
func (m *mergingIter) Close() error {
	errs := []error{m.err}
	for i := range m.children {
		errs = append(errs, m.children[i].it.Close())
	}
	return errors.Join(errs...)
}
