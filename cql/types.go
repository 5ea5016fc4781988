package cql

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sibyldb/sibyl/cqltype"
)

// TypeRef is a CQL type as written in a statement. It stays syntax because a
// user type's name means nothing until a schema says what the type is: call
// Resolve, which applies cqltype's rules (what may be frozen, what may nest).
type TypeRef struct {
	// Kind is a native kind, List, Set, Map, Tuple, UDT (a user type named
	// by Keyspace and Name) or Custom (a quoted class name in Name).
	Kind     cqltype.Kind
	Frozen   bool       // written frozen<...>
	Params   []*TypeRef // list, set: element; map: key, value; tuple: components
	Keyspace string     // UDT: "" when not qualified
	Name     string     // UDT: the type's name; Custom: the class
	// Dimension is a vector's size as written (checked by Resolve).
	Dimension string
}

func (t *TypeRef) String() string {
	var b strings.Builder
	t.write(&b, nil)
	return b.String()
}

// write renders t; with udts non-nil, user types are written as quoted
// placeholders "#i" and collected, so Resolve can hand the text to cqltype.
func (t *TypeRef) write(b *strings.Builder, udts *[]*TypeRef) {
	if t.Frozen {
		b.WriteString("frozen<")
	}
	switch t.Kind {
	case cqltype.UDT:
		if udts != nil {
			b.WriteString(`"#` + strconv.Itoa(len(*udts)) + `"`)
			*udts = append(*udts, t)
			break
		}
		if t.Keyspace != "" {
			b.WriteString(quoteIdent(t.Keyspace) + ".")
		}
		b.WriteString(quoteTypeName(t.Name))
	case cqltype.Custom:
		b.WriteString(quoteString(t.Name))
	case cqltype.List, cqltype.Set, cqltype.Map, cqltype.Tuple:
		b.WriteString(t.Kind.String())
		b.WriteByte('<')
		for i, p := range t.Params {
			if i > 0 {
				b.WriteString(", ")
			}
			p.write(b, udts)
		}
		b.WriteByte('>')
	case cqltype.Vector:
		b.WriteString("vector<")
		t.Params[0].write(b, udts)
		b.WriteString(", " + t.Dimension + ">")
	default:
		b.WriteString(t.Kind.String())
	}
	if t.Frozen {
		b.WriteByte('>')
	}
}

// Resolve builds the cqltype.Type that t names, looking user types up with
// resolve (unqualified names in keyspace). Its errors are cqltype's: a
// frozen native type, a non-frozen collection inside a collection, counters
// in collections, unknown user types and so on.
func (t *TypeRef) Resolve(keyspace string, resolve cqltype.UDTResolver) (*cqltype.Type, error) {
	// cqltype.Parse owns the nesting rules; user types go through it as
	// placeholders because it cannot take a quoted keyspace qualifier.
	var udts []*TypeRef
	var b strings.Builder
	t.write(&b, &udts)
	src := b.String()
	lookup := func(_, name string) (*cqltype.Type, error) {
		i, err := strconv.Atoi(strings.TrimPrefix(name, "#"))
		if err != nil || i < 0 || i >= len(udts) {
			return nil, fmt.Errorf("unknown type %s", quoteTypeName(name))
		}
		u := udts[i]
		ks := u.Keyspace
		if ks == "" {
			ks = keyspace
		}
		if resolve == nil {
			return nil, fmt.Errorf("unknown type %s.%s", quoteIdent(ks), quoteTypeName(u.Name))
		}
		typ, err := resolve(ks, u.Name)
		if err == nil && typ == nil {
			err = fmt.Errorf("unknown type %s.%s", quoteIdent(ks), quoteTypeName(u.Name))
		}
		return typ, err
	}
	typ, err := cqltype.Parse(src, keyspace, lookup)
	if err != nil {
		msg := strings.ReplaceAll(err.Error(), strconv.Quote(src), strconv.Quote(t.String()))
		return nil, &resolveError{msg: msg, err: err}
	}
	return typ, nil
}

// resolveError restates a cqltype error in terms of the type as written,
// keeping the original (and what it wraps) reachable through errors.Is/As.
type resolveError struct {
	msg string
	err error
}

func (e *resolveError) Error() string { return e.msg }
func (e *resolveError) Unwrap() error { return e.err }
