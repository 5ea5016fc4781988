package cqltype

import (
	"encoding/binary"
	"fmt"
	"unicode/utf8"
)

// Validate reports whether v is a valid serialized value of t
// (cql-clients.md 1.14), with Cassandra's error wording where it has one.
// nil and empty (length 0) are the same here: Validate sees values, and null
// is the caller's business.
//
// The empty value is accepted where Cassandra accepts it: every native type
// except smallint, tinyint, date, time and duration (newer types whose
// serializers demand exact sizes), plus blob, the strings, tuples and UDTs.
// Collections reject it ("Not enough bytes to read a list").
//
// Stricter than Cassandra on purpose, so that every value has one spelling
// and bytes that Cassandra could not read back are refused early: a decimal
// needs at least 5 bytes (Cassandra validates 4 but then cannot read the
// empty unscaled value), a duration may not carry trailing bytes after its
// three vints. A tuple or UDT component of any negative length is null, as
// in Cassandra (drivers send -2, unset, for a field they were not given);
// Normalize rewrites it as -1, so a stored value has one spelling.
func (t *Type) Validate(v []byte) error {
	switch t.Kind {
	case Custom, Blob:
		return nil
	case Ascii:
		for _, c := range v {
			if c > 127 {
				return fmt.Errorf("Invalid byte for ascii: %d", c)
			}
		}
		return nil
	case Text:
		if !utf8.Valid(v) {
			return fmt.Errorf("String didn't validate.")
		}
		return nil
	case Bigint, Counter:
		if len(v) != 8 && len(v) != 0 {
			return fmt.Errorf("Expected 8 or 0 byte long (%d)", len(v))
		}
	case Int:
		if len(v) != 4 && len(v) != 0 {
			return fmt.Errorf("Expected 4 or 0 byte int (%d)", len(v))
		}
	case Smallint:
		if len(v) != 2 {
			return fmt.Errorf("Expected 2 bytes for a smallint (%d)", len(v))
		}
	case Tinyint:
		if len(v) != 1 {
			return fmt.Errorf("Expected 1 byte for a tinyint (%d)", len(v))
		}
	case Boolean:
		if len(v) > 1 {
			return fmt.Errorf("Expected 1 or 0 byte value (%d)", len(v))
		}
	case Float:
		if len(v) != 4 && len(v) != 0 {
			return fmt.Errorf("Expected 4 or 0 byte value for a float (%d)", len(v))
		}
	case Double:
		if len(v) != 8 && len(v) != 0 {
			return fmt.Errorf("Expected 8 or 0 byte value for a double (%d)", len(v))
		}
	case Timestamp:
		if len(v) != 8 && len(v) != 0 {
			return fmt.Errorf("Expected 8 or 0 byte long for date (%d)", len(v))
		}
	case Date:
		if len(v) != 4 {
			return fmt.Errorf("Expected 4 byte long for date (%d)", len(v))
		}
	case Time:
		_, err := DecodeTime(v)
		return err
	case UUID:
		if len(v) != 16 && len(v) != 0 {
			return fmt.Errorf("UUID should be 16 or 0 bytes (%d)", len(v))
		}
	case Timeuuid:
		if len(v) != 16 && len(v) != 0 {
			return fmt.Errorf("TimeUUID should be 16 or 0 bytes (%d)", len(v))
		}
		if len(v) == 16 && v[6]&0xF0 != 0x10 {
			return fmt.Errorf("Invalid version for TimeUUID type.")
		}
	case Inet:
		if len(v) != 4 && len(v) != 16 && len(v) != 0 {
			return fmt.Errorf("Invalid length for inet address (%d): expected 4 or 16 bytes", len(v))
		}
	case Varint:
		// Any bytes are a two's complement integer.
	case Decimal:
		if len(v) != 0 && len(v) < 5 {
			return fmt.Errorf("Expected 0 or at least 5 bytes for a decimal (%d)", len(v))
		}
	case Duration:
		_, _, _, err := DecodeDuration(v)
		return err
	case List, Set:
		return t.validateListOrSet(v)
	case Map:
		return t.validateMap(v)
	case Tuple, UDT:
		return t.validateTuple(v)
	case Vector:
		return t.validateVector(v)
	default:
		return fmt.Errorf("cannot validate values of unknown kind %d", t.Kind)
	}
	return nil
}

func (t *Type) validateListOrSet(v []byte) error {
	if len(t.Params) != 1 {
		return fmt.Errorf("malformed type %s: %s needs 1 parameter", t, t.Kind)
	}
	r := collReader{b: v, what: t.Kind.String()}
	n, err := r.count()
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		e, err := r.next()
		if err != nil {
			return err
		}
		if err := t.Params[0].Validate(e); err != nil {
			return err
		}
	}
	return r.end()
}

func (t *Type) validateMap(v []byte) error {
	if len(t.Params) != 2 {
		return fmt.Errorf("malformed type %s: map needs 2 parameters", t)
	}
	r := collReader{b: v, what: "map"}
	n, err := r.count()
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		k, err := r.next()
		if err != nil {
			return err
		}
		if err := t.Params[0].Validate(k); err != nil {
			return err
		}
		e, err := r.next()
		if err != nil {
			return err
		}
		if err := t.Params[1].Validate(e); err != nil {
			return err
		}
	}
	return r.end()
}

// validateTuple walks the components without allocating. Fewer components
// than declared is fine (a UDT may have gained fields since the value was
// written); more is not.
func (t *Type) validateTuple(v []byte) error {
	pos := 0
	for i, ct := range t.Params {
		if pos == len(v) {
			return nil
		}
		if len(v)-pos < 4 {
			return fmt.Errorf("Not enough bytes to read size of %dth component", i)
		}
		size := int32(binary.BigEndian.Uint32(v[pos:]))
		pos += 4
		if size < 0 {
			continue // null, as Cassandra reads every negative size; Normalize spells it -1
		}
		if int64(size) > int64(len(v)-pos) {
			return fmt.Errorf("Not enough bytes to read %dth component", i)
		}
		if err := ct.Validate(v[pos : pos+int(size)]); err != nil {
			return err
		}
		pos += int(size)
	}
	if pos != len(v) {
		n := len(t.Params)
		plural := "values"
		if n == 1 {
			plural = "value"
		}
		return fmt.Errorf("Expected %d %s for %s column, but got more", n, plural, t)
	}
	return nil
}
