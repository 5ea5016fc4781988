package cqltype

import (
	"strconv"
	"strings"
)

// Kind identifies a CQL type family. The order is part of the API (other
// packages switch on it), not of any wire format: use OptionID for the
// native protocol.
type Kind uint8

// The CQL kinds. Native kinds come first, then the parameterized ones.
const (
	Custom Kind = iota
	Ascii
	Bigint
	Blob
	Boolean
	Counter
	Date
	Decimal
	Double
	Duration
	Float
	Inet
	Int
	Smallint
	Text
	Time
	Timestamp
	Timeuuid
	Tinyint
	UUID
	Varint
	List
	Set
	Map
	Tuple
	UDT
	Vector
)

// kindInfo holds the per-kind facts that several files need.
type kindInfo struct {
	name     string // CQL name
	optionID uint16 // native protocol type option id (cql-clients.md 1.13)
	class    string // Cassandra marshal class (without package) for native kinds
}

var kinds = [...]kindInfo{
	Custom:    {"custom", 0x0000, ""},
	Ascii:     {"ascii", 0x0001, "AsciiType"},
	Bigint:    {"bigint", 0x0002, "LongType"},
	Blob:      {"blob", 0x0003, "BytesType"},
	Boolean:   {"boolean", 0x0004, "BooleanType"},
	Counter:   {"counter", 0x0005, "CounterColumnType"},
	Date:      {"date", 0x0011, "SimpleDateType"},
	Decimal:   {"decimal", 0x0006, "DecimalType"},
	Double:    {"double", 0x0007, "DoubleType"},
	Duration:  {"duration", 0x0015, "DurationType"},
	Float:     {"float", 0x0008, "FloatType"},
	Inet:      {"inet", 0x0010, "InetAddressType"},
	Int:       {"int", 0x0009, "Int32Type"},
	Smallint:  {"smallint", 0x0013, "ShortType"},
	Text:      {"text", 0x000D, "UTF8Type"},
	Time:      {"time", 0x0012, "TimeType"},
	Timestamp: {"timestamp", 0x000B, "TimestampType"},
	Timeuuid:  {"timeuuid", 0x000F, "TimeUUIDType"},
	Tinyint:   {"tinyint", 0x0014, "ByteType"},
	UUID:      {"uuid", 0x000C, "UUIDType"},
	Varint:    {"varint", 0x000E, "IntegerType"},
	List:      {"list", 0x0020, "ListType"},
	Set:       {"set", 0x0022, "SetType"},
	Map:       {"map", 0x0021, "MapType"},
	Tuple:     {"tuple", 0x0031, "TupleType"},
	UDT:       {"udt", 0x0030, "UserType"},
	Vector:    {"vector", 0x0000, "VectorType"},
}

// MarshalPackage is the Java package of Cassandra's type classes; custom type
// names and the v4 encoding of duration use it.
const MarshalPackage = "org.apache.cassandra.db.marshal."

// String returns the CQL name of the kind ("int", "list", ...; "udt" and
// "custom" for those two).
func (k Kind) String() string {
	if int(k) < len(kinds) {
		return kinds[k].name
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// OptionID returns the native protocol type option id of the kind
// (cql-clients.md 1.13). Text answers 0x000D, the id Cassandra sends.
func (k Kind) OptionID() uint16 {
	if int(k) < len(kinds) {
		return kinds[k].optionID
	}
	return 0
}

// IsNative reports whether k is a kind without parameters (everything but
// custom, the collections, tuples and UDTs).
func (k Kind) IsNative() bool { return k >= Ascii && k <= Varint }

// MarshalClass returns the fully qualified Cassandra class of a native kind
// (e.g. "org.apache.cassandra.db.marshal.DurationType", which protocol v4
// sends as a custom type), or "" for other kinds.
func MarshalClass(k Kind) string {
	if !k.IsNative() {
		return ""
	}
	return MarshalPackage + kinds[k].class
}

// kindFromClass maps a Cassandra marshal class name (qualified or not) back
// to a native kind, so custom types that are really native types become
// native; drivers do the same.
func kindFromClass(class string) (Kind, bool) {
	short := strings.TrimPrefix(class, MarshalPackage)
	for k := Ascii; k <= Varint; k++ {
		if kinds[k].class == short {
			return k, true
		}
	}
	return Custom, false
}

// Type is a CQL type. Values are immutable once built; pass by pointer.
type Type struct {
	Kind       Kind
	Frozen     bool     // frozen<...> collections/UDTs (tuples are always frozen)
	Params     []*Type  // list/set: [elem]; map: [key, value]; tuple: components; UDT: field types
	Keyspace   string   // UDT only
	Name       string   // UDT name; Custom: Java class name
	FieldNames []string // UDT only, same order as Params
	Dimension  int      // vector only: the number of elements
}

// Singletons for the native kinds. They are shared: never modify them.
var (
	AsciiType     = &Type{Kind: Ascii}
	BigintType    = &Type{Kind: Bigint}
	BlobType      = &Type{Kind: Blob}
	BooleanType   = &Type{Kind: Boolean}
	CounterType   = &Type{Kind: Counter}
	DateType      = &Type{Kind: Date}
	DecimalType   = &Type{Kind: Decimal}
	DoubleType    = &Type{Kind: Double}
	DurationType  = &Type{Kind: Duration}
	FloatType     = &Type{Kind: Float}
	InetType      = &Type{Kind: Inet}
	IntType       = &Type{Kind: Int}
	SmallintType  = &Type{Kind: Smallint}
	TextType      = &Type{Kind: Text}
	TimeType      = &Type{Kind: Time}
	TimestampType = &Type{Kind: Timestamp}
	TimeuuidType  = &Type{Kind: Timeuuid}
	TinyintType   = &Type{Kind: Tinyint}
	UUIDType      = &Type{Kind: UUID}
	VarintType    = &Type{Kind: Varint}
)

var natives = [...]*Type{
	Ascii: AsciiType, Bigint: BigintType, Blob: BlobType, Boolean: BooleanType,
	Counter: CounterType, Date: DateType, Decimal: DecimalType, Double: DoubleType,
	Duration: DurationType, Float: FloatType, Inet: InetType, Int: IntType,
	Smallint: SmallintType, Text: TextType, Time: TimeType, Timestamp: TimestampType,
	Timeuuid: TimeuuidType, Tinyint: TinyintType, UUID: UUIDType, Varint: VarintType,
}

// Native returns the singleton for a native kind, or nil for custom and
// parameterized kinds (they need more than a kind to describe).
func Native(k Kind) *Type {
	if !k.IsNative() {
		return nil
	}
	return natives[k]
}

// ListOf returns list<e> (frozen<list<e>> when frozen).
func ListOf(e *Type, frozen bool) *Type {
	return &Type{Kind: List, Frozen: frozen, Params: []*Type{e}}
}

// SetOf returns set<e> (frozen<set<e>> when frozen).
func SetOf(e *Type, frozen bool) *Type {
	return &Type{Kind: Set, Frozen: frozen, Params: []*Type{e}}
}

// MapOf returns map<k, v> (frozen<map<k, v>> when frozen).
func MapOf(k, v *Type, frozen bool) *Type {
	return &Type{Kind: Map, Frozen: frozen, Params: []*Type{k, v}}
}

// TupleOf returns tuple<ts...>. Tuples are always frozen.
func TupleOf(ts ...*Type) *Type {
	return &Type{Kind: Tuple, Frozen: true, Params: ts}
}

// UDTOf returns a user-defined type; fields and types are parallel slices.
func UDTOf(keyspace, name string, fields []string, types []*Type, frozen bool) *Type {
	return &Type{Kind: UDT, Frozen: frozen, Keyspace: keyspace, Name: name, FieldNames: fields, Params: types}
}

// MarshalName returns t's Cassandra marshal class with its parameters,
// the name a custom type option carries on the wire.
func (t *Type) MarshalName() string { return marshalName(t) }

// CustomOf returns a custom type named by its Java class.
func CustomOf(class string) *Type { return &Type{Kind: Custom, Name: class} }

// Freeze returns a frozen copy of t, with everything inside it frozen too, as
// Cassandra freezes the inside of a frozen type. Native types come back
// unchanged.
func (t *Type) Freeze() *Type {
	switch t.Kind {
	case List, Set, Map, Tuple, UDT, Vector:
	default:
		return t
	}
	c := *t
	c.Frozen = true
	c.Params = make([]*Type, len(t.Params))
	for i, p := range t.Params {
		c.Params[i] = p.Freeze()
	}
	return &c
}

// String returns the CQL form: "int", "frozen<list<int>>", "map<text, int>",
// "tuple<int, text>", a UDT's (possibly quoted) name, frozen<name> when frozen,
// and a quoted class name for custom types. The result parses back with Parse.
func (t *Type) String() string {
	var b strings.Builder
	t.write(&b, false)
	return b.String()
}

// SchemaString returns the form Cassandra stores in system_schema and shows in
// DESCRIBE: like String, but tuples are spelled frozen<tuple<...>>.
func (t *Type) SchemaString() string {
	var b strings.Builder
	t.write(&b, true)
	return b.String()
}

func (t *Type) write(b *strings.Builder, schema bool) {
	if t == nil {
		b.WriteString("<nil>")
		return
	}
	switch t.Kind {
	case Custom:
		b.WriteString(quoteString(t.Name))
	case List, Set, Map, Tuple:
		frozen := t.Frozen && t.Kind != Tuple || t.Kind == Tuple && schema
		if frozen {
			b.WriteString("frozen<")
		}
		b.WriteString(t.Kind.String())
		b.WriteByte('<')
		for i, p := range t.Params {
			if i > 0 {
				b.WriteString(", ")
			}
			p.write(b, schema)
		}
		b.WriteByte('>')
		if frozen {
			b.WriteByte('>')
		}
	case Vector:
		b.WriteString("vector<")
		t.Params[0].write(b, schema)
		b.WriteString(", " + strconv.Itoa(t.Dimension) + ">")
	case UDT:
		if t.Frozen {
			b.WriteString("frozen<")
		}
		b.WriteString(QuoteIdent(t.Name))
		if t.Frozen {
			b.WriteByte('>')
		}
	default:
		b.WriteString(t.Kind.String())
	}
}

// Equal reports whether t and o describe the same type, including frozenness,
// UDT keyspace, name and fields.
func (t *Type) Equal(o *Type) bool {
	if t == o {
		return true
	}
	if t == nil || o == nil {
		return false
	}
	if t.Kind != o.Kind || t.Frozen != o.Frozen && t.Kind != Tuple || t.Keyspace != o.Keyspace ||
		t.Name != o.Name || t.Dimension != o.Dimension || len(t.Params) != len(o.Params) || len(t.FieldNames) != len(o.FieldNames) {
		return false
	}
	for i := range t.Params {
		if !t.Params[i].Equal(o.Params[i]) {
			return false
		}
	}
	for i := range t.FieldNames {
		if t.FieldNames[i] != o.FieldNames[i] {
			return false
		}
	}
	return true
}

// IsCollection reports whether t is a list, set or map (frozen or not).
func (t *Type) IsCollection() bool {
	return t.Kind == List || t.Kind == Set || t.Kind == Map
}

// IsMultiCell reports whether values of t are stored one cell per element: a
// non-frozen collection or a non-frozen UDT.
func (t *Type) IsMultiCell() bool {
	return !t.Frozen && (t.IsCollection() || t.Kind == UDT)
}

// IsComparable reports whether Compare gives t a meaningful order, that is,
// whether t may be a clustering column. Duration (anywhere inside t) has no
// order, and counters cannot be keys.
func (t *Type) IsComparable() bool {
	switch t.Kind {
	case Duration, Counter:
		return false
	}
	for _, p := range t.Params {
		if !p.IsComparable() {
			return false
		}
	}
	return true
}

// ReferencesDuration reports whether t is or contains duration.
func (t *Type) ReferencesDuration() bool {
	if t.Kind == Duration {
		return true
	}
	for _, p := range t.Params {
		if p.ReferencesDuration() {
			return true
		}
	}
	return false
}

// QuoteIdent returns name as a CQL identifier: unchanged when it is a lower
// case unquoted identifier that is not a type keyword, double-quoted (with
// inner quotes doubled) otherwise.
func QuoteIdent(name string) string {
	if isPlainIdent(name) && !reservedTypeName(name) {
		return name
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

func isPlainIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z':
		case i > 0 && (c >= '0' && c <= '9' || c == '_'):
		default:
			return false
		}
	}
	return true
}

// reservedTypeName reports names that Parse would read as something other
// than a UDT, so a UDT with such a name must be quoted.
func reservedTypeName(s string) bool {
	if _, ok := nativeNames[s]; ok {
		return true
	}
	switch s {
	case "frozen", "list", "set", "map", "tuple", "vector":
		return true
	}
	return false
}

func quoteString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
