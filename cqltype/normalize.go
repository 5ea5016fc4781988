package cqltype

import (
	"sort"
)

// Normalize returns v in the canonical form Cassandra gives a collection
// value when it receives it: set elements sorted by Compare with duplicates
// (Compare-equal elements) dropped, keeping the first; map entries sorted by
// key with duplicate keys merged, keeping the first key's bytes and the last
// value; tuple and UDT components of negative length (null) written as
// -1; and the same inside every nested collection, tuple and UDT. Lists,
// tuples and UDTs keep their order, and tuples and UDTs the number of
// components they came with. Values of other types come back as they are. v must be valid (Validate); the result is a new slice when anything is
// rebuilt.
//
// Frozen sets and maps must be normalized before they are compared or
// encoded as keys: {2, 1} and {1, 2} are the same value to Cassandra.
func (t *Type) Normalize(v []byte) ([]byte, error) {
	if err := t.Validate(v); err != nil {
		return nil, err
	}
	if len(v) == 0 || !t.needsNormalize() {
		return v, nil
	}
	return t.normalize(v)
}

// needsNormalize reports whether t is or contains a set, a map, a tuple or
// a UDT: the values that may arrive in more than one spelling.
func (t *Type) needsNormalize() bool {
	switch t.Kind {
	case Set, Map, Tuple, UDT:
		return true
	}
	for _, p := range t.Params {
		if p.needsNormalize() {
			return true
		}
	}
	return false
}

func (t *Type) normalize(v []byte) ([]byte, error) {
	if len(v) == 0 || !t.needsNormalize() {
		return v, nil
	}
	switch t.Kind {
	case List, Set:
		elems, err := DecodeCollection(v)
		if err != nil {
			return nil, err
		}
		for i, e := range elems {
			if elems[i], err = t.Params[0].normalize(e); err != nil {
				return nil, err
			}
		}
		if t.Kind == Set {
			et := t.Params[0]
			sort.SliceStable(elems, func(i, j int) bool { return et.Compare(elems[i], elems[j]) < 0 })
			out := elems[:0]
			for _, e := range elems {
				if len(out) > 0 && et.Compare(out[len(out)-1], e) == 0 {
					continue
				}
				out = append(out, e)
			}
			elems = out
		}
		return EncodeCollection(elems), nil
	case Map:
		keys, vals, err := DecodeMap(v)
		if err != nil {
			return nil, err
		}
		for i := range keys {
			if keys[i], err = t.Params[0].normalize(keys[i]); err != nil {
				return nil, err
			}
			if vals[i], err = t.Params[1].normalize(vals[i]); err != nil {
				return nil, err
			}
		}
		idx := make([]int, len(keys))
		for i := range idx {
			idx[i] = i
		}
		kt := t.Params[0]
		sort.SliceStable(idx, func(a, b int) bool { return kt.Compare(keys[idx[a]], keys[idx[b]]) < 0 })
		var nk, nv [][]byte
		for _, i := range idx {
			if len(nk) > 0 && kt.Compare(nk[len(nk)-1], keys[i]) == 0 {
				nv[len(nv)-1] = vals[i] // a later duplicate overwrites the value
				continue
			}
			nk, nv = append(nk, keys[i]), append(nv, vals[i])
		}
		return EncodeMap(nk, nv), nil
	case Tuple, UDT:
		fields := make([][]byte, len(t.Params))
		n, err := splitTuple(v, len(t.Params), fields)
		if err != nil {
			return nil, err
		}
		fields = fields[:n]
		for i, f := range fields {
			if f == nil {
				continue
			}
			if fields[i], err = t.Params[i].normalize(f); err != nil {
				return nil, err
			}
		}
		return EncodeTuple(fields), nil
	case Vector:
		elems, err := DecodeVector(t, v)
		if err != nil {
			return nil, err
		}
		for i, e := range elems {
			if elems[i], err = t.Params[0].normalize(e); err != nil {
				return nil, err
			}
		}
		return EncodeVector(t, elems), nil
	}
	return v, nil
}
