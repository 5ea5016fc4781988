package exec

import (
	"slices"

	"github.com/sibyldb/sibyl/cqltype"
)

// Cassandra 5.0's collection functions (CollectionFcts): each is made for
// the type of its argument, which must be known (a column or a typed
// expression), and null gives null. min, max, sum and avg fold the
// elements as the aggregates of the same names fold rows.

// collectionParams are the functions and the kind of argument each names
// in Cassandra's messages.
var collectionParams = map[string]string{
	"map_keys": "map", "map_values": "map", "collection_count": "collection",
	// Cassandra prints min's and max's parameter as sum's.
	"collection_min": "numeric_set_or_list", "collection_max": "numeric_set_or_list",
	"collection_sum": "numeric_set_or_list", "collection_avg": "numeric_set_or_list",
}

func isCollectionFunction(name string) bool {
	_, ok := collectionParams[name]
	return ok
}

// collectionFunction is the collection function name for its argument.
func collectionFunction(name string, args []cqltype.FunctionArg) (*function, error) {
	qualified := "system." + name
	signature := qualified + "(" + collectionParams[name] + ")"
	if len(args) != 1 {
		return nil, invalidf("Invalid number of arguments for function %s", signature)
	}
	t := cqltype.ArgType(args[0])
	if t == nil {
		return nil, invalidf("Cannot infer type of argument %s in call to function %s: use type casts to disambiguate", args[0], signature)
	}
	wrong := func(what string) error {
		return invalidf("Function %s requires a %s argument, but found argument %s of type %s", qualified, what, args[0], t.SchemaString())
	}
	listOrSet := t.Kind == cqltype.List || t.Kind == cqltype.Set
	f := &function{name: qualified, args: []*cqltype.Type{t}}
	switch name {
	case "map_keys", "map_values":
		if t.Kind != cqltype.Map {
			return nil, wrong("map")
		}
		keys := name == "map_keys"
		f.returns = cqltype.ListOf(t.Params[1], true)
		if keys {
			f.returns = cqltype.SetOf(t.Params[0], true)
		}
		f.scalar = func(vals [][]byte) ([]byte, error) {
			if vals[0] == nil {
				return nil, nil
			}
			ks, vs, err := cqltype.DecodeMap(vals[0])
			if err != nil {
				return nil, asInvalid(err)
			}
			if keys {
				return cqltype.EncodeCollection(ks), nil
			}
			return cqltype.EncodeCollection(vs), nil
		}
		return f, nil
	case "collection_count":
		if !t.IsCollection() {
			return nil, wrong("collection")
		}
		f.returns = cqltype.IntType
		f.scalar = func(vals [][]byte) ([]byte, error) {
			if vals[0] == nil {
				return nil, nil
			}
			n, err := collectionSize(t, vals[0])
			if err != nil {
				return nil, asInvalid(err)
			}
			return cqltype.EncodeInt(int32(n)), nil
		}
		return f, nil
	case "collection_min", "collection_max":
		if !listOrSet {
			return nil, wrong("set or list")
		}
		elem := t.Params[0]
		f.returns = elem
		max := name == "collection_max"
		f.scalar = foldElements(func() aggregate { return &extreme{t: elem, max: max} })
		return f, nil
	}
	if !listOrSet || !slices.Contains(numericKinds, t.Params[0].Kind) {
		return nil, wrong("numeric set/list")
	}
	elem := t.Params[0]
	f.returns = elem
	avg := name == "collection_avg"
	f.scalar = foldElements(func() aggregate { return newSummer(elem.Kind, avg) })
	return f, nil
}

// collectionSize is the number of elements (entries of a map).
func collectionSize(t *cqltype.Type, v []byte) (int, error) {
	if t.Kind == cqltype.Map {
		ks, _, err := cqltype.DecodeMap(v)
		return len(ks), err
	}
	es, err := cqltype.DecodeCollection(v)
	return len(es), err
}

// foldElements runs an aggregate over a list's or set's elements.
func foldElements(newAggregate func() aggregate) func(vals [][]byte) ([]byte, error) {
	return func(vals [][]byte) ([]byte, error) {
		if vals[0] == nil {
			return nil, nil
		}
		es, err := cqltype.DecodeCollection(vals[0])
		if err != nil {
			return nil, asInvalid(err)
		}
		a := newAggregate()
		arg := make([][]byte, 1) // the aggregates keep the values, not the slice
		for _, e := range es {
			arg[0] = e
			if err := a.add(arg); err != nil {
				return nil, err
			}
		}
		return a.result(), nil
	}
}
