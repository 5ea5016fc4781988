package exec

import (
	"crypto/rand"
	"encoding/binary"
	"sync"
	"time"

	"github.com/sibyldb/sibyl/cql"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/schema"
)

// List elements are cells whose paths are timeuuids. Appending takes fresh
// ones; prepending takes ones from before every appended element; setting,
// deleting or removing by value first reads the list's current cells to
// find their paths, as Cassandra does (a read before the write).

// currentList returns the live cells of a list column in the row an
// UPDATE or DELETE targets, in list order.
type currentList func(c *schema.Column) ([]mutation.Cell, error)

// listReader reads the list cells of the row at clustering (nil: the
// static row) in the partition key, at now.
func (s *Session) listReader(t *schema.Table, key, clustering []byte, now int64) currentList {
	return func(c *schema.Column) ([]mutation.Cell, error) {
		var p *request.Partition
		if s.current != nil {
			p = s.current.row(clustering, c.Kind == schema.Static || len(t.Clustering) == 0)
		} else {
			q := request.PartitionRead{Key: key, Slice: request.Slice{Now: now, Trace: s.trace}, Consistency: s.consistency}
			if c.Kind != schema.Static && len(t.Clustering) > 0 {
				q.Start, q.End = mutation.StartBound(clustering, true), mutation.EndBound(clustering, true)
			}
			var err error
			if p, err = s.c.ReadPartition(t, q); err != nil {
				return nil, coordinatorError(err)
			}
		}
		var r *mutation.Row
		switch {
		case p == nil:
		case c.Kind == schema.Static:
			r = p.Static
		case len(p.Rows) > 0:
			r = p.Rows[0].Row
		}
		if r == nil {
			return nil, nil
		}
		var out []mutation.Cell
		for _, cell := range r.Cells {
			if cell.Column == c.Name && cell.IsLive(now) {
				out = append(out, cell)
			}
		}
		return out, nil
	}
}

// setListElement writes l[i] = v (nil v deletes the element).
func setListElement(w *schema.CellWriter, r *mutation.Row, c *schema.Column, index, value cql.Expr, bound *binding, current currentList) error {
	i, err := listIndex(index, bound)
	if err != nil {
		return err
	}
	v, err := term(value, c.Type.Params[0], c.Name, bound)
	if err != nil || bound.preparing() {
		return err // preparing: no data to check the index against
	}
	path, err := listElementPath(c, i, current, "set an element on")
	if err != nil {
		return err
	}
	if v == nil {
		r.Cells = append(r.Cells, w.Tombstone(c, path))
		return nil
	}
	r.Cells = append(r.Cells, w.Cell(c, path, v))
	return nil
}

// listElementPath is the cell path of element i of the list in column c,
// or the error Cassandra gives when the list is null ("Attempted to <what>
// a list which is null") or too short.
func listElementPath(c *schema.Column, i int, current currentList, what string) ([]byte, error) {
	cells, err := current(c)
	if err != nil {
		return nil, err
	}
	if len(cells) == 0 {
		return nil, dataf("Attempted to %s a list which is null", what)
	}
	if i < 0 || i >= len(cells) {
		return nil, dataf("List index %d out of bound, list has size %d", i, len(cells))
	}
	return cells[i].Path, nil
}

// deleteListElement writes DELETE l[i].
func deleteListElement(w *schema.CellWriter, r *mutation.Row, c *schema.Column, index cql.Expr, bound *binding, current currentList) error {
	i, err := listIndex(index, bound)
	if err != nil || bound.preparing() {
		return err // preparing: no data to check the index against
	}
	path, err := listElementPath(c, i, current, "delete an element from")
	if err != nil {
		return err
	}
	r.Cells = append(r.Cells, w.Tombstone(c, path))
	return nil
}

// removeListValues writes l = l - [values]: every element equal to one of
// them goes.
func removeListValues(w *schema.CellWriter, r *mutation.Row, c *schema.Column, value cql.Expr, bound *binding, current currentList) error {
	v, err := term(value, c.Type, c.Name, bound)
	if err != nil || v == nil {
		return err
	}
	remove, err := cqltype.DecodeCollection(v)
	if err != nil {
		return asInvalid(err)
	}
	cells, err := current(c)
	if err != nil {
		return err
	}
	elem := c.Type.Params[0]
	for _, cell := range cells {
		for _, x := range remove {
			if elem.Compare(cell.Value, x) == 0 {
				r.Cells = append(r.Cells, w.Tombstone(c, cell.Path))
				break
			}
		}
	}
	return nil
}

// prependList writes l = [values] + l: the new elements take timeuuids
// from before every element appended, each prepend before the last.
func prependList(w *schema.CellWriter, r *mutation.Row, c *schema.Column, value cql.Expr, bound *binding) error {
	v, err := term(value, c.Type, c.Name, bound)
	if err != nil || v == nil {
		return err
	}
	elems, err := cqltype.DecodeCollection(v)
	if err != nil {
		return asInvalid(err)
	}
	paths := prependPaths(len(elems))
	for i, e := range elems {
		path, err := cqltype.TimeuuidType.AppendComparable(nil, paths[i])
		if err != nil {
			return asInvalid(err)
		}
		r.Cells = append(r.Cells, w.Cell(c, path, e))
	}
	return nil
}

func listIndex(e cql.Expr, bound *binding) (int, error) {
	v, err := term(e, cqltype.IntType, "[list index]", bound)
	if err != nil {
		return 0, err
	}
	if v == nil {
		return 0, invalidf("Invalid null value for list index")
	}
	i, _ := cqltype.DecodeInt(v)
	return int(i), nil
}

// prependReference is Cassandra's reference time for prepended list
// elements, 2010-01-01: a prepend at time t takes the time as far before
// the reference as t is after it, so later prepends sort earlier, and all
// sort before appended elements (which take the current time).
var prependReference = time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()

var prepends struct {
	sync.Mutex
	last int64 // ticks of the last prepended element
	low  uint64
}

// prependPaths returns n timeuuids, in list order, each before the last
// prepended one.
func prependPaths(n int) [][]byte {
	prepends.Lock()
	defer prepends.Unlock()
	if prepends.low == 0 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		prepends.low = binary.BigEndian.Uint64(b[:])&0x3fffffffffffffff | 0x8000000000000000
	}
	millis := 2*prependReference - time.Now().UnixMilli()
	ticks := millis * 10000
	if prepends.last != 0 && ticks >= prepends.last {
		ticks = prepends.last - 1
	}
	out := make([][]byte, n)
	// The last element is nearest the old head; the first comes before it.
	for i := n - 1; i >= 0; i-- {
		out[i] = cqltype.TimeUUIDAt(ticks, prepends.low)
		prepends.last = ticks
		ticks--
	}
	return out
}
