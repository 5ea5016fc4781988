package cqltype

import "testing"

// TestExampleValuesAreValid checks Example against Validate for every
// type, nested ones included.
func TestExampleValuesAreValid(t *testing.T) {
	udt := UDTOf("ks", "u", []string{"a", "b"}, []*Type{IntType, ListOf(TextType, true)}, true)
	for _, typ := range []*Type{AsciiType, BigintType, BlobType, BooleanType, DateType, DecimalType, DoubleType,
		DurationType, FloatType, InetType, IntType, SmallintType, TextType, TimeType, TimestampType, TimeuuidType,
		TinyintType, UUIDType, VarintType, ListOf(IntType, false), SetOf(TimeuuidType, true),
		MapOf(TextType, ListOf(DateType, true), false), TupleOf(IntType, TextType, DurationType), udt} {
		v := typ.Example()
		if v == nil {
			t.Errorf("%s: null example", typ)
			continue
		}
		if err := typ.Validate(v); err != nil {
			t.Errorf("%s: example %x does not validate: %v", typ, v, err)
		}
	}
}
