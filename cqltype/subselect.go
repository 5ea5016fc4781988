package cqltype

import "fmt"

// Element is what value[key] selects from a serialized map or set: the
// map's value for key, or the set's element equal to key; nil when there
// is none.
func (t *Type) Element(coll, key []byte) ([]byte, error) {
	switch t.Kind {
	case Map:
		keys, vals, err := DecodeMap(coll)
		if err != nil {
			return nil, err
		}
		for i, k := range keys {
			if t.Params[0].Compare(k, key) == 0 {
				return vals[i], nil
			}
		}
	case Set:
		elems, err := DecodeCollection(coll)
		if err != nil {
			return nil, err
		}
		for _, e := range elems {
			if t.Params[0].Compare(e, key) == 0 {
				return e, nil
			}
		}
	default:
		return nil, fmt.Errorf("cqltype: element selection on %s", t)
	}
	return nil, nil
}

// Slice is what value[from..to] selects from a serialized map or set: the
// entries whose keys lie between the bounds, both included (a nil bound
// is open). Cassandra answers an empty slice of a frozen collection with
// an empty one, and of a multi-cell collection with null.
func (t *Type) Slice(coll, from, to []byte) ([]byte, error) {
	in := func(k []byte) bool {
		cmp := t.Params[0].Compare
		return (from == nil || cmp(from, k) <= 0) && (to == nil || cmp(k, to) <= 0)
	}
	var out []byte
	n := 0
	switch t.Kind {
	case Map:
		keys, vals, err := DecodeMap(coll)
		if err != nil {
			return nil, err
		}
		var ks, vs [][]byte
		for i, k := range keys {
			if in(k) {
				ks, vs = append(ks, k), append(vs, vals[i])
			}
		}
		out, n = EncodeMap(ks, vs), len(ks)
	case Set:
		elems, err := DecodeCollection(coll)
		if err != nil {
			return nil, err
		}
		var es [][]byte
		for _, e := range elems {
			if in(e) {
				es = append(es, e)
			}
		}
		out, n = EncodeCollection(es), len(es)
	default:
		return nil, fmt.Errorf("cqltype: slice selection on %s", t)
	}
	if n == 0 && !t.Frozen {
		return nil, nil
	}
	return out, nil
}

// Field is what value.name selects from a serialized user type value: the
// field's value, nil when null or absent (a value written before the
// field was added has fewer fields).
func (t *Type) Field(v []byte, index int) ([]byte, error) {
	if t.Kind != UDT || index >= len(t.Params) {
		return nil, fmt.Errorf("cqltype: no field %d in %s", index, t)
	}
	fields, err := DecodeTuple(v, len(t.Params))
	if err != nil {
		return nil, err
	}
	return fields[index], nil
}
