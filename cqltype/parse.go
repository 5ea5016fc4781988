package cqltype

import (
	"fmt"
	"strconv"
	"strings"
)

// UDTResolver finds a user-defined type by name in a keyspace during parsing
// (nil: UDT names are an error). The returned type must have Kind UDT; Parse
// never modifies it (it copies when it needs a frozen variant).
type UDTResolver func(keyspace, name string) (*Type, error)

var nativeNames = map[string]Kind{
	"ascii": Ascii, "bigint": Bigint, "blob": Blob, "boolean": Boolean,
	"counter": Counter, "date": Date, "decimal": Decimal, "double": Double,
	"duration": Duration, "float": Float, "inet": Inet, "int": Int,
	"smallint": Smallint, "text": Text, "varchar": Text, "time": Time,
	"timestamp": Timestamp, "timeuuid": Timeuuid, "tinyint": Tinyint,
	"uuid": UUID, "varint": Varint,
}

// Parse reads CQL type syntax: native names (case-insensitive; varchar is
// text), frozen<...>, list<...>, set<...>, map<..., ...>, tuple<...>, UDT names
// (plain, "quoted" or keyspace-qualified, looked up with resolve in keyspace
// unless qualified) and quoted custom class names. Whitespace may appear
// between any two tokens. It applies Cassandra's rules for what may nest:
// collections inside collections must be frozen, counters and non-frozen UDTs
// cannot be nested, durations cannot be set elements or map keys.
func Parse(s string, keyspace string, resolve UDTResolver) (*Type, error) {
	p := &typeParser{src: s, keyspace: keyspace, resolve: resolve}
	t, err := p.parseType()
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(p.src) {
		return nil, fmt.Errorf("invalid type %q: unexpected %q at offset %d", s, p.src[p.pos:], p.pos)
	}
	if err := checkNesting(t, s); err != nil {
		return nil, err
	}
	if t.exampleValues() > MaxVectorDimension {
		return nil, fmt.Errorf("vectors may only hold up to %d values in all, in %s", MaxVectorDimension, t)
	}
	return t, nil
}

type typeParser struct {
	src      string
	pos      int
	keyspace string
	resolve  UDTResolver
	depth    int
}

// maxTypeDepth bounds nesting so a hostile type string cannot exhaust the
// stack; real schemas nest a handful of levels.
const maxTypeDepth = 64

func (p *typeParser) errorf(format string, args ...any) error {
	return fmt.Errorf("invalid type %q: %s", p.src, fmt.Sprintf(format, args...))
}

func (p *typeParser) skipSpace() {
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case ' ', '\t', '\n', '\r', '\f', '\v':
			p.pos++
		default:
			return
		}
	}
}

func (p *typeParser) expect(c byte) error {
	p.skipSpace()
	if p.pos >= len(p.src) {
		return p.errorf("expected '%c' at end of input", c)
	}
	if p.src[p.pos] != c {
		return p.errorf("expected '%c' at offset %d, found '%c'", c, p.pos, p.src[p.pos])
	}
	p.pos++
	return nil
}

func (p *typeParser) peek() byte {
	p.skipSpace()
	if p.pos >= len(p.src) {
		return 0
	}
	return p.src[p.pos]
}

// ident reads an identifier, returning its text (case preserved) and whether
// it was double-quoted.
func (p *typeParser) ident() (string, bool, error) {
	p.skipSpace()
	if p.pos >= len(p.src) {
		return "", false, p.errorf("expected a type name at end of input")
	}
	if p.src[p.pos] == '"' {
		var b strings.Builder
		p.pos++
		for {
			if p.pos >= len(p.src) {
				return "", false, p.errorf("unterminated quoted name")
			}
			c := p.src[p.pos]
			p.pos++
			if c == '"' {
				if p.pos < len(p.src) && p.src[p.pos] == '"' {
					b.WriteByte('"')
					p.pos++
					continue
				}
				break
			}
			b.WriteByte(c)
		}
		if b.Len() == 0 {
			return "", false, p.errorf("empty quoted name")
		}
		return b.String(), true, nil
	}
	start := p.pos
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || p.pos > start && c >= '0' && c <= '9' {
			p.pos++
			continue
		}
		break
	}
	if p.pos == start {
		return "", false, p.errorf("expected a type name at offset %d, found '%c'", p.pos, p.src[p.pos])
	}
	return p.src[start:p.pos], false, nil
}

func (p *typeParser) parseType() (*Type, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxTypeDepth {
		return nil, p.errorf("nested more than %d levels", maxTypeDepth)
	}
	if p.peek() == '\'' {
		return p.parseCustom()
	}
	name, quoted, err := p.ident()
	if err != nil {
		return nil, err
	}
	if quoted {
		return p.parseUDT("", name)
	}
	lower := strings.ToLower(name)
	if k, ok := nativeNames[lower]; ok {
		if p.peek() == '<' {
			return nil, p.errorf("%s takes no type parameters", lower)
		}
		return Native(k), nil
	}
	switch lower {
	case "frozen":
		if err := p.expect('<'); err != nil {
			return nil, err
		}
		inner, err := p.parseType()
		if err != nil {
			return nil, err
		}
		if err := p.expect('>'); err != nil {
			return nil, err
		}
		switch inner.Kind {
		case List, Set, Map, Tuple, UDT, Vector:
			return inner.Freeze(), nil
		}
		return nil, p.errorf("frozen<> is only allowed on collections, tuples, and user-defined types, not %s", inner)
	case "vector":
		if p.peek() == '<' {
			return p.parseVector()
		}
	case "list", "set", "map", "tuple":
		if p.peek() != '<' {
			break // a UDT may be called list only if quoted; fall through to the error below
		}
		params, err := p.parseParams()
		if err != nil {
			return nil, err
		}
		switch lower {
		case "list", "set":
			if len(params) != 1 {
				return nil, p.errorf("%s takes exactly 1 type parameter, got %d", lower, len(params))
			}
			if lower == "list" {
				return ListOf(params[0], false), nil
			}
			return SetOf(params[0], false), nil
		case "map":
			if len(params) != 2 {
				return nil, p.errorf("map takes exactly 2 type parameters, got %d", len(params))
			}
			return MapOf(params[0], params[1], false), nil
		default:
			for i, c := range params {
				params[i] = c.Freeze()
			}
			return TupleOf(params...), nil
		}
	}
	if reservedTypeName(lower) {
		return nil, p.errorf("%s needs type parameters", lower)
	}
	// A UDT name, maybe keyspace-qualified. Unquoted names are case-insensitive.
	if p.peek() == '.' {
		p.pos++
		udt, q, err := p.ident()
		if err != nil {
			return nil, err
		}
		if !q {
			udt = strings.ToLower(udt)
		}
		return p.parseUDT(lower, udt)
	}
	return p.parseUDT("", lower)
}

func (p *typeParser) parseParams() ([]*Type, error) {
	if err := p.expect('<'); err != nil {
		return nil, err
	}
	var params []*Type
	for {
		t, err := p.parseType()
		if err != nil {
			return nil, err
		}
		params = append(params, t)
		switch p.peek() {
		case ',':
			p.pos++
		case '>':
			p.pos++
			return params, nil
		case 0:
			return nil, p.errorf("expected ',' or '>' at end of input")
		default:
			return nil, p.errorf("expected ',' or '>' at offset %d, found '%c'", p.pos, p.src[p.pos])
		}
	}
}

func (p *typeParser) parseCustom() (*Type, error) {
	p.pos++ // opening quote
	var b strings.Builder
	for {
		if p.pos >= len(p.src) {
			return nil, p.errorf("unterminated custom type name")
		}
		c := p.src[p.pos]
		p.pos++
		if c == '\'' {
			if p.pos < len(p.src) && p.src[p.pos] == '\'' {
				b.WriteByte('\'')
				p.pos++
				continue
			}
			break
		}
		b.WriteByte(c)
	}
	class := b.String()
	if class == "" {
		return nil, p.errorf("empty custom type name")
	}
	t, err := TypeFromClass(class)
	if err != nil {
		return nil, p.errorf("%v", err)
	}
	return t, nil
}

// parseVector reads <element, dimension> after vector. The element is
// frozen, as every value inside a vector is one value.
func (p *typeParser) parseVector() (*Type, error) {
	if err := p.expect('<'); err != nil {
		return nil, err
	}
	elem, err := p.parseType()
	if err != nil {
		return nil, err
	}
	if err := p.expect(','); err != nil {
		return nil, err
	}
	p.skipSpace()
	start := p.pos
	for p.pos < len(p.src) && (p.src[p.pos] >= '0' && p.src[p.pos] <= '9' || p.pos == start && p.src[p.pos] == '-') {
		p.pos++
	}
	n, err := strconv.ParseInt(p.src[start:p.pos], 10, 32)
	if err != nil {
		return nil, p.errorf("expected a vector dimension at offset %d", start)
	}
	if err := p.expect('>'); err != nil {
		return nil, err
	}
	switch {
	case n <= 0:
		return nil, fmt.Errorf(vectorDimensionError, n)
	case n > MaxVectorDimension:
		return nil, fmt.Errorf(vectorMaxDimensionError, MaxVectorDimension, n)
	}
	return VectorOf(elem.Freeze(), int(n)), nil
}

func (p *typeParser) parseUDT(keyspace, name string) (*Type, error) {
	if p.resolve == nil {
		return nil, p.errorf("unknown type %s", QuoteIdent(name))
	}
	if keyspace == "" {
		keyspace = p.keyspace
	}
	t, err := p.resolve(keyspace, name)
	if err != nil {
		return nil, fmt.Errorf("invalid type %q: %w", p.src, err)
	}
	if t == nil {
		return nil, p.errorf("unknown type %s.%s", QuoteIdent(keyspace), QuoteIdent(name))
	}
	if t.Kind != UDT {
		return nil, p.errorf("%s is not a user-defined type", QuoteIdent(name))
	}
	if t.Frozen {
		// The resolver's copy may be frozen; a bare name means non-frozen.
		c := *t
		c.Frozen = false
		return &c, nil
	}
	return t, nil
}

// checkNesting applies Cassandra's restrictions on what may appear inside
// collections and tuples.
func checkNesting(t *Type, src string) error {
	switch t.Kind {
	case List, Set, Map:
		for i, p := range t.Params {
			if p.Kind == Counter {
				return fmt.Errorf("invalid type %q: counters are not allowed inside collections: %s", src, t)
			}
			if p.IsMultiCell() {
				if p.Kind == UDT {
					return fmt.Errorf("invalid type %q: non-frozen UDTs are not allowed inside collections: %s", src, t)
				}
				return fmt.Errorf("invalid type %q: non-frozen collections are not allowed inside collections: %s", src, t)
			}
			if p.ReferencesDuration() && (t.Kind == Set || t.Kind == Map && i == 0) {
				what := "sets"
				if t.Kind == Map {
					what = "map keys"
				}
				return fmt.Errorf("invalid type %q: durations are not allowed inside %s: %s", src, what, t)
			}
			if err := checkNesting(p, src); err != nil {
				return err
			}
		}
	case Tuple, UDT:
		for _, p := range t.Params {
			if p.Kind == Counter {
				return fmt.Errorf("invalid type %q: counters are not allowed inside tuples or user-defined types: %s", src, t)
			}
			if t.Kind == Tuple {
				if err := checkNesting(p, src); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
