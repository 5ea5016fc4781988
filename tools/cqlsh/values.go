package cqlsh

import (
	"github.com/gocql/gocql"
	"github.com/sibyldb/sibyl/cqltype"
)

// rawValue keeps a column's bytes as the server sent them, with their
// type: the shell prints every type itself, as cqlsh does, instead of
// going through Go values.
type rawValue struct {
	typ  gocql.TypeInfo
	data []byte
	null bool
}

// UnmarshalCQL keeps the bytes (gocql.Unmarshaler).
func (r *rawValue) UnmarshalCQL(info gocql.TypeInfo, data []byte) error {
	r.typ, r.null = info, data == nil
	r.data = append(r.data[:0], data...)
	return nil
}

// cqlType turns gocql's description of a column's type into the CQL type
// that prints it.
func cqlType(info gocql.TypeInfo) *cqltype.Type {
	switch t := info.(type) {
	case gocql.CollectionType:
		switch t.Type() {
		case gocql.TypeList:
			return cqltype.ListOf(cqlType(t.Elem), false)
		case gocql.TypeSet:
			return cqltype.SetOf(cqlType(t.Elem), false)
		case gocql.TypeMap:
			return cqltype.MapOf(cqlType(t.Key), cqlType(t.Elem), false)
		}
	case gocql.TupleTypeInfo:
		elems := make([]*cqltype.Type, len(t.Elems))
		for i, e := range t.Elems {
			elems[i] = cqlType(e)
		}
		return cqltype.TupleOf(elems...)
	case gocql.UDTTypeInfo:
		names := make([]string, len(t.Elements))
		types := make([]*cqltype.Type, len(t.Elements))
		for i, f := range t.Elements {
			names[i], types[i] = f.Name, cqlType(f.Type)
		}
		return cqltype.UDTOf(t.KeySpace, t.Name, names, types, true)
	}
	if k, ok := nativeKinds[info.Type()]; ok {
		return &cqltype.Type{Kind: k}
	}
	if info.Type() == gocql.TypeCustom {
		// Native types sent as their Cassandra class (duration before
		// protocol v5) become native again.
		if t, err := cqltype.Parse("'"+info.Custom()+"'", "", nil); err == nil {
			return t
		}
		return &cqltype.Type{Kind: cqltype.Custom, Name: info.Custom()}
	}
	return &cqltype.Type{Kind: cqltype.Blob}
}

var nativeKinds = map[gocql.Type]cqltype.Kind{
	gocql.TypeAscii: cqltype.Ascii, gocql.TypeBigInt: cqltype.Bigint, gocql.TypeBlob: cqltype.Blob,
	gocql.TypeBoolean: cqltype.Boolean, gocql.TypeCounter: cqltype.Counter, gocql.TypeDecimal: cqltype.Decimal,
	gocql.TypeDouble: cqltype.Double, gocql.TypeFloat: cqltype.Float, gocql.TypeInt: cqltype.Int,
	gocql.TypeText: cqltype.Text, gocql.TypeVarchar: cqltype.Text, gocql.TypeTimestamp: cqltype.Timestamp,
	gocql.TypeUUID: cqltype.UUID, gocql.TypeTimeUUID: cqltype.Timeuuid, gocql.TypeInet: cqltype.Inet,
	gocql.TypeVarint: cqltype.Varint, gocql.TypeDate: cqltype.Date, gocql.TypeTime: cqltype.Time,
	gocql.TypeSmallInt: cqltype.Smallint, gocql.TypeTinyInt: cqltype.Tinyint, gocql.TypeDuration: cqltype.Duration,
}
