package cqltype

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
)

// DecodeComparable reads one encoding written by AppendComparable from the
// front of src and returns the original value bytes and what follows. It
// rejects every byte string AppendComparable cannot produce, so a successful
// decode re-encodes to exactly the bytes consumed. The value never aliases
// src. The empty value comes back as a non-nil empty slice.
func (t *Type) DecodeComparable(src []byte) (v, rest []byte, err error) {
	r := creader{src: src}
	v, err = t.decodeTop(&r)
	if err != nil {
		return nil, src, err
	}
	return v, src[r.pos:], nil
}

// DecodeComparableInverted reads one encoding written by
// AppendComparableInverted (an encoding with every byte inverted).
func (t *Type) DecodeComparableInverted(src []byte) (v, rest []byte, err error) {
	r := creader{src: src, mask: 0xFF}
	v, err = t.decodeTop(&r)
	if err != nil {
		return nil, src, err
	}
	return v, src[r.pos:], nil
}

var errTruncated = errors.New("comparable encoding truncated")

// creader reads an encoding, optionally inverting every byte on the way (for
// descending columns), so no inverted copy of the key is needed.
type creader struct {
	src  []byte
	pos  int
	mask byte
}

func (r *creader) byte() (byte, error) {
	if r.pos >= len(r.src) {
		return 0, errTruncated
	}
	c := r.src[r.pos] ^ r.mask
	r.pos++
	return c, nil
}

// appendN appends the next n bytes (un-inverted) to dst.
func (r *creader) appendN(dst []byte, n int) ([]byte, error) {
	if n < 0 || len(r.src)-r.pos < n {
		return dst, errTruncated
	}
	start := len(dst)
	dst = append(dst, r.src[r.pos:r.pos+n]...)
	r.pos += n
	if r.mask != 0 {
		InvertBytes(dst[start:])
	}
	return dst, nil
}

func (r *creader) uint32() (uint32, error) {
	var b [4]byte
	if _, err := r.appendN(b[:0], 4); err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint32(b[:]), nil
}

func (r *creader) uint64() (uint64, error) {
	var b [8]byte
	if _, err := r.appendN(b[:0], 8); err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint64(b[:]), nil
}

// uvint reads a minimal unsigned vint, inverting its bytes first when inv is
// set (negative varint lengths are written inverted).
func (r *creader) uvint(inv byte) (uint64, error) {
	first, err := r.byte()
	if err != nil {
		return 0, err
	}
	first ^= inv
	var buf [9]byte
	buf[0] = first
	n := 1
	for c := first; c&0x80 != 0 && n < 9; c <<= 1 {
		b, err := r.byte()
		if err != nil {
			return 0, err
		}
		buf[n] = b ^ inv
		n++
	}
	v, _, err := readMinimalUnsignedVint(buf[:n])
	if err != nil {
		return 0, fmt.Errorf("comparable encoding: %v", err)
	}
	return v, nil
}

func (t *Type) decodeTop(r *creader) ([]byte, error) {
	m, err := r.byte()
	if err != nil {
		return nil, err
	}
	switch m {
	case markEmpty:
		if err := t.Validate(nil); err != nil {
			return nil, fmt.Errorf("comparable encoding: empty value not valid for %s: %v", t, err)
		}
		return []byte{}, nil
	case markPresent:
	default:
		return nil, fmt.Errorf("comparable encoding: bad marker 0x%02x", m)
	}
	var n cnode
	if err := t.decodePrimary(r, &n); err != nil {
		return nil, err
	}
	v, err := t.decodeTie(r, &n)
	if err != nil {
		return nil, err
	}
	if len(v) == 0 {
		// Present bodies always decode to something; an empty result would
		// re-encode with the empty marker.
		return nil, fmt.Errorf("comparable encoding: present marker on an empty %s value", t)
	}
	return v, nil
}

// cnode holds what the primary part of a value said, until its tie part has
// been read and the value can be rebuilt.
type cnode struct {
	val   []byte  // leaf bytes (for decimal: the digits)
	mark  byte    // as an element or component: its marker (null, empty, present)
	flag  byte    // boolean: 1 = true; float: 1 = NaN; decimal: the sign class
	exp   int64   // decimal exponent
	elems []cnode // elements, map keys and values interleaved, or tuple components
}

func (t *Type) decodePrimary(r *creader, n *cnode) error {
	var err error
	switch t.Kind {
	case Vector:
		return ListOf(t.Params[0], true).decodePrimary(r, n)
	case Int, Bigint, Counter, Smallint, Tinyint, Timestamp, Time:
		if n.val, err = r.appendN(nil, fixedSize(t.Kind)); err != nil {
			return err
		}
		n.val[0] ^= 0x80
		return t.checkLeaf(n.val)
	case Date:
		n.val, err = r.appendN(nil, 4)
		return err
	case Boolean:
		b, err := r.byte()
		if err != nil {
			return err
		}
		if b > 1 {
			return fmt.Errorf("comparable encoding: bad boolean 0x%02x", b)
		}
		n.flag = b
	case Float:
		k, err := r.uint32()
		if err != nil {
			return err
		}
		if k == 0xFFFFFFFF {
			n.flag = 1
			return nil
		}
		u := ^k
		if k&0x80000000 != 0 {
			u = k &^ 0x80000000
		}
		if isNaN32(u) {
			return errors.New("comparable encoding: non-canonical NaN")
		}
		n.val = binary.BigEndian.AppendUint32(nil, u)
	case Double:
		k, err := r.uint64()
		if err != nil {
			return err
		}
		if k == 0xFFFFFFFFFFFFFFFF {
			n.flag = 1
			return nil
		}
		u := ^k
		if k&(1<<63) != 0 {
			u = k &^ (1 << 63)
		}
		if isNaN64(u) {
			return errors.New("comparable encoding: non-canonical NaN")
		}
		n.val = binary.BigEndian.AppendUint64(nil, u)
	case UUID:
		k, err := r.uint64()
		if err != nil {
			return err
		}
		n.val = binary.BigEndian.AppendUint64(make([]byte, 0, 16), uuidUnkey(k))
		n.val, err = r.appendN(n.val, 8)
		return err
	case Timeuuid:
		k, err := r.uint64()
		if err != nil {
			return err
		}
		n.val = binary.BigEndian.AppendUint64(make([]byte, 0, 16), timeUUIDUnkey(k))
		if n.val, err = r.appendN(n.val, 8); err != nil {
			return err
		}
		for i := 8; i < 16; i++ {
			n.val[i] ^= 0x80
		}
		return t.checkLeaf(n.val)
	case Ascii, Text, Blob, Inet, Custom, Duration:
		if n.val, err = r.escaped(); err != nil {
			return err
		}
		return t.checkLeaf(n.val)
	case Varint:
		return decodeVarintPrimary(r, n)
	case Decimal:
		return decodeDecimalPrimary(r, n)
	case List, Set:
		if len(t.Params) != 1 {
			return fmt.Errorf("malformed type %s", t)
		}
		return decodeElems(r, n, t.Params)
	case Map:
		if len(t.Params) != 2 {
			return fmt.Errorf("malformed type %s", t)
		}
		return decodeElems(r, n, t.Params)
	case Tuple, UDT:
		n.elems = make([]cnode, len(t.Params))
		for i, ct := range t.Params {
			e := &n.elems[i]
			if e.mark, err = r.byte(); err != nil {
				return err
			}
			switch e.mark {
			case elemNull, elemEmpty:
				if e.mark == elemEmpty {
					if err := ct.Validate(nil); err != nil {
						return fmt.Errorf("comparable encoding: empty component not valid for %s", ct)
					}
				}
			case elemPresent:
				if err := ct.decodePrimary(r, e); err != nil {
					return err
				}
			default:
				return fmt.Errorf("comparable encoding: bad component marker 0x%02x", e.mark)
			}
		}
	default:
		return fmt.Errorf("no comparable encoding for kind %s", t.Kind)
	}
	return nil
}

// decodeElems reads list or set elements (one type) or map entries (two
// types, alternating) up to the end marker.
func decodeElems(r *creader, n *cnode, types []*Type) error {
	for {
		for i, et := range types {
			m, err := r.byte()
			if err != nil {
				return err
			}
			if m == elemNull && i == 0 {
				return nil // end of the collection
			}
			e := cnode{mark: m}
			switch m {
			case elemEmpty:
				if err := et.Validate(nil); err != nil {
					return fmt.Errorf("comparable encoding: empty element not valid for %s", et)
				}
			case elemPresent:
				if err := et.decodePrimary(r, &e); err != nil {
					return err
				}
			default:
				return fmt.Errorf("comparable encoding: bad element marker 0x%02x", m)
			}
			n.elems = append(n.elems, e)
		}
	}
}

// checkLeaf validates a decoded leaf, so that decoding never returns bytes
// AppendComparable would refuse.
func (t *Type) checkLeaf(v []byte) error {
	if err := t.Validate(v); err != nil {
		return fmt.Errorf("comparable encoding: invalid %s value: %v", t, err)
	}
	return nil
}

func fixedSize(k Kind) int {
	switch k {
	case Tinyint:
		return 1
	case Smallint:
		return 2
	case Int, Date, Float:
		return 4
	default:
		return 8
	}
}

// escaped reads an escaped byte string up to its 0x00 0x01 terminator.
func (r *creader) escaped() ([]byte, error) {
	// An escaped zero is always followed by 0xFF, so the first 0x00 0x01 is
	// the terminator: find it to size the output once.
	term := []byte{0x00 ^ r.mask, 0x01 ^ r.mask}
	size := bytes.Index(r.src[r.pos:], term)
	if size < 0 {
		return nil, errTruncated
	}
	out := make([]byte, 0, size)
	for {
		c, err := r.byte()
		if err != nil {
			return nil, err
		}
		if c != 0 {
			out = append(out, c)
			continue
		}
		c, err = r.byte()
		if err != nil {
			return nil, err
		}
		switch c {
		case 0x01:
			if len(out) == 0 {
				return nil, errors.New("comparable encoding: empty escaped string")
			}
			return out, nil
		case 0xFF:
			out = append(out, 0)
		default:
			return nil, fmt.Errorf("comparable encoding: bad escape 0x00 0x%02x", c)
		}
	}
}

func decodeVarintPrimary(r *creader, n *cnode) error {
	sign, err := r.byte()
	if err != nil {
		return err
	}
	var inv byte
	switch sign {
	case 0x00:
		inv = 0xFF
	case 0x01:
	default:
		return fmt.Errorf("comparable encoding: bad varint sign 0x%02x", sign)
	}
	size, err := r.uvint(inv)
	if err != nil {
		return err
	}
	if size == 0 || size > uint64(len(r.src)-r.pos) {
		return errTruncated
	}
	if n.val, err = r.appendN(nil, int(size)); err != nil {
		return err
	}
	m := n.val
	if (m[0]&0x80 != 0) != (sign == 0x00) || len(minimalVarint(m)) != len(m) {
		return errors.New("comparable encoding: non-canonical varint")
	}
	return nil
}

func decodeDecimalPrimary(r *creader, n *cnode) error {
	class, err := r.byte()
	if err != nil {
		return err
	}
	n.flag = class
	var inv byte
	switch class {
	case 0x01:
		return nil
	case 0x00:
		inv = 0xFF
	case 0x02:
	default:
		return fmt.Errorf("comparable encoding: bad decimal class 0x%02x", class)
	}
	e, err := r.uint64()
	if err != nil {
		return err
	}
	n.exp = int64((e ^ uint64(inv)*0x0101010101010101) ^ 1<<63)
	var digits []byte
	for {
		b, err := r.byte()
		if err != nil {
			return err
		}
		b ^= inv
		if b == 0 {
			break
		}
		if b > 100 {
			return fmt.Errorf("comparable encoding: bad decimal digit pair 0x%02x", b)
		}
		digits = append(digits, '0'+(b-1)/10, '0'+(b-1)%10)
	}
	// The encoder strips trailing zeros and pads an odd count with one zero,
	// so a final zero is padding, and what is left must start and end with a
	// non-zero digit.
	if len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
	}
	if len(digits) == 0 || digits[0] == '0' || digits[len(digits)-1] == '0' {
		return errors.New("comparable encoding: non-canonical decimal digits")
	}
	n.val = digits
	return nil
}

// decodeTie reads the tie part for a node whose primary has been read and
// returns the rebuilt value.
func (t *Type) decodeTie(r *creader, n *cnode) ([]byte, error) {
	switch t.Kind {
	case Vector:
		lv, err := ListOf(t.Params[0], true).decodeTie(r, n)
		if err != nil {
			return nil, err
		}
		elems, err := DecodeCollection(lv)
		if err != nil || len(elems) != t.Dimension {
			return nil, fmt.Errorf("comparable encoding: not a %s value", t)
		}
		return EncodeVector(t, elems), nil
	case Boolean:
		if n.flag == 0 {
			return []byte{0}, nil
		}
		b, err := r.byte()
		if err != nil {
			return nil, err
		}
		if b == 0 {
			return nil, errors.New("comparable encoding: boolean true with a zero byte")
		}
		return []byte{b}, nil
	case Float, Double:
		if n.flag == 0 {
			return n.val, nil
		}
		v, err := r.appendN(nil, fixedSize(t.Kind))
		if err != nil {
			return nil, err
		}
		if t.Kind == Float && !isNaN32(binary.BigEndian.Uint32(v)) ||
			t.Kind == Double && !isNaN64(binary.BigEndian.Uint64(v)) {
			return nil, errors.New("comparable encoding: NaN tie is not a NaN")
		}
		return v, nil
	case Varint:
		extra, err := r.uvint(0)
		if err != nil {
			return nil, err
		}
		if extra > maxRedundantBytes {
			return nil, fmt.Errorf("comparable encoding: %d redundant varint bytes", extra)
		}
		return withSignBytes(n.val, int(extra)), nil
	case Decimal:
		return decodeDecimalTie(r, n)
	case List, Set:
		elems, err := t.Params[0].decodeElemTies(r, n.elems)
		if err != nil {
			return nil, err
		}
		return EncodeCollection(elems), nil
	case Map:
		if len(n.elems)%2 != 0 {
			return nil, errors.New("comparable encoding: map entry without a value")
		}
		keys := make([][]byte, 0, len(n.elems)/2)
		vals := make([][]byte, 0, len(n.elems)/2)
		for i := 0; i < len(n.elems); i += 2 {
			k, err := t.Params[0].decodeElemTies(r, n.elems[i:i+1])
			if err != nil {
				return nil, err
			}
			v, err := t.Params[1].decodeElemTies(r, n.elems[i+1:i+2])
			if err != nil {
				return nil, err
			}
			keys, vals = append(keys, k[0]), append(vals, v[0])
		}
		return EncodeMap(keys, vals), nil
	case Tuple, UDT:
		count, err := r.uvint(0)
		if err != nil {
			return nil, err
		}
		if count == 0 {
			// Zero serialized components is the empty value, which has its
			// own marker.
			return nil, fmt.Errorf("comparable encoding: present %s with no components", t.Kind)
		}
		if count > uint64(len(t.Params)) {
			return nil, fmt.Errorf("comparable encoding: %d components for a %d-component %s", count, len(t.Params), t.Kind)
		}
		fields := make([][]byte, count)
		for i, ct := range t.Params {
			e := &n.elems[i]
			if uint64(i) >= count {
				if e.mark != elemNull {
					return nil, errors.New("comparable encoding: component beyond the serialized count")
				}
				continue
			}
			switch e.mark {
			case elemNull:
				fields[i] = nil
			case elemEmpty:
				fields[i] = []byte{}
			default:
				if fields[i], err = ct.decodeTie(r, e); err != nil {
					return nil, err
				}
			}
		}
		return EncodeTuple(fields), nil
	default:
		return n.val, nil
	}
}

// decodeElemTies finishes a run of elements of type t.
func (t *Type) decodeElemTies(r *creader, elems []cnode) ([][]byte, error) {
	out := make([][]byte, len(elems))
	for i := range elems {
		if elems[i].mark == elemEmpty {
			out[i] = []byte{}
			continue
		}
		v, err := t.decodeTie(r, &elems[i])
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// withSignBytes prepends extra copies of m's sign byte.
func withSignBytes(m []byte, extra int) []byte {
	if extra == 0 {
		return m
	}
	fill := byte(0x00)
	if m[0]&0x80 != 0 {
		fill = 0xFF
	}
	out := make([]byte, extra, extra+len(m))
	for i := range out {
		out[i] = fill
	}
	return append(out, m...)
}

func decodeDecimalTie(r *creader, n *cnode) ([]byte, error) {
	s, err := r.uint32()
	if err != nil {
		return nil, err
	}
	scale := int32(s ^ 0x80000000)
	extra, err := r.uvint(0)
	if err != nil {
		return nil, err
	}
	if extra > maxRedundantBytes {
		return nil, fmt.Errorf("comparable encoding: %d redundant decimal bytes", extra)
	}
	out := binary.BigEndian.AppendUint32(nil, uint32(scale))
	if n.flag == 0x01 { // zero
		return append(out, withSignBytes([]byte{0}, int(extra))...), nil
	}
	// |unscaled| = digits × 10^zeros, where E = len(digits) + zeros - scale.
	const maxExp = 1 << 40 // far beyond any decimal that fits in memory
	if n.exp > maxExp || n.exp < -maxExp {
		return nil, fmt.Errorf("comparable encoding: decimal exponent %d out of range", n.exp)
	}
	zeros := n.exp - int64(len(n.val)) + int64(scale)
	if zeros < 0 || zeros > maxDecimalZeros {
		return nil, fmt.Errorf("comparable encoding: decimal exponent %d does not match scale %d", n.exp, scale)
	}
	u, ok := new(big.Int).SetString(string(n.val), 10)
	if !ok {
		return nil, errors.New("comparable encoding: bad decimal digits")
	}
	if zeros > 0 {
		u.Mul(u, new(big.Int).Exp(bigTen, big.NewInt(zeros), nil))
	}
	if n.flag == 0x00 {
		u.Neg(u)
	}
	return append(out, withSignBytes(appendVarint(nil, u), int(extra))...), nil
}
