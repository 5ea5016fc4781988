package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrShort is the error of a payload that ends before its fields do, or
// whose lengths do not fit in what is left.
var ErrShort = errors.New("a message ends too soon")

// Writer appends fields to B.
type Writer struct{ B []byte }

// Bytes appends a byte string.
func (w *Writer) Bytes(v []byte) {
	w.B = binary.AppendUvarint(w.B, uint64(len(v)))
	w.B = append(w.B, v...)
}

// String appends a string as its bytes.
func (w *Writer) String(v string) {
	w.B = binary.AppendUvarint(w.B, uint64(len(v)))
	w.B = append(w.B, v...)
}

// Int appends a signed number.
func (w *Writer) Int(v int64) { w.B = binary.AppendVarint(w.B, v) }

// Uint appends an unsigned number.
func (w *Writer) Uint(v uint64) { w.B = binary.AppendUvarint(w.B, v) }

// Bool appends a flag.
func (w *Writer) Bool(v bool) {
	if v {
		w.Int(1)
	} else {
		w.Int(0)
	}
}

// Optional appends a value that may be absent (nil) as a flag and the
// value.
func (w *Writer) Optional(v []byte) {
	w.Bool(v != nil)
	if v != nil {
		w.Bytes(v)
	}
}

// Reader reads fields from B. After the first failure Err is set and
// every read returns a zero value.
type Reader struct {
	B   []byte
	Err error
}

// Fail records err, unless an error is recorded already, and stops the
// reads.
func (r *Reader) Fail(err error) {
	if r.Err == nil {
		r.Err = err
	}
	r.B = nil
}

// Bytes reads a byte string; it aliases B.
func (r *Reader) Bytes() []byte {
	n, k := binary.Uvarint(r.B)
	if k <= 0 || uint64(len(r.B)-k) < n {
		r.Fail(ErrShort)
		return nil
	}
	v := r.B[k : k+int(n)]
	r.B = r.B[k+int(n):]
	return v
}

// Fixed reads a byte string that must be len(dst) bytes long (an id)
// into dst; what names it in the error of another length.
func (r *Reader) Fixed(dst []byte, what string) {
	b := r.Bytes()
	if r.Err != nil {
		return
	}
	if len(b) != len(dst) {
		r.Fail(fmt.Errorf("%s of %d bytes, not %d", what, len(b), len(dst)))
		return
	}
	copy(dst, b)
}

// String reads a string.
func (r *Reader) String() string { return string(r.Bytes()) }

// Int reads a signed number.
func (r *Reader) Int() int64 {
	v, k := binary.Varint(r.B)
	if k <= 0 {
		r.Fail(ErrShort)
		return 0
	}
	r.B = r.B[k:]
	return v
}

// Uint reads an unsigned number.
func (r *Reader) Uint() uint64 {
	v, k := binary.Uvarint(r.B)
	if k <= 0 {
		r.Fail(ErrShort)
		return 0
	}
	r.B = r.B[k:]
	return v
}

// Bool reads a flag.
func (r *Reader) Bool() bool { return r.Int() != 0 }

// Count reads the length of a list, refusing one longer than the bytes
// left could hold (every element takes at least one), so that a corrupt
// length cannot size an allocation.
func (r *Reader) Count() int {
	n := r.Int()
	if n < 0 || n > int64(len(r.B)) {
		r.Fail(ErrShort)
		return 0
	}
	return int(n)
}

// Optional reads what Writer.Optional wrote: nil when absent, never nil
// when present.
func (r *Reader) Optional() []byte {
	if !r.Bool() {
		return nil
	}
	if v := r.Bytes(); v != nil {
		return v
	}
	return []byte{}
}

// Done is the first error, or one saying bytes were left over.
func (r *Reader) Done() error {
	if r.Err == nil && len(r.B) != 0 {
		return errors.New("bytes left over after the last field")
	}
	return r.Err
}
