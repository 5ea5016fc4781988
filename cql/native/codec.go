package native

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// reader decodes the primitive notations of the protocol's bodies
// ([short], [string], [bytes], ...). The first failure sticks: callers
// read on and check err once.
type reader struct {
	b   []byte
	err error
}

var errShort = errors.New("not enough bytes")

func (r *reader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b) {
		r.fail(errShort)
		return nil
	}
	out := r.b[:n:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) byte() byte {
	if b := r.take(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *reader) short() uint16 {
	if b := r.take(2); b != nil {
		return binary.BigEndian.Uint16(b)
	}
	return 0
}

func (r *reader) int() int32 {
	if b := r.take(4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (r *reader) long() int64 {
	if b := r.take(8); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

func (r *reader) string() string { return string(r.take(int(r.short()))) }

func (r *reader) longString() string {
	n := r.int()
	if n < 0 {
		r.fail(fmt.Errorf("negative string length %d", n))
		return ""
	}
	return string(r.take(int(n)))
}

func (r *reader) shortBytes() []byte { return r.take(int(r.short())) }

// bytes reads [bytes]: nil for a negative length (null).
func (r *reader) bytes() []byte {
	n := r.int()
	if n < 0 {
		return nil
	}
	return r.take(int(n))
}

// value reads [value]: null is nil; unset (-2) reports unset.
func (r *reader) value() (v []byte, unset bool) {
	n := r.int()
	switch {
	case n == -2:
		return nil, true
	case n < 0 && n != -1:
		r.fail(fmt.Errorf("invalid value length %d", n))
		return nil, false
	case n == -1:
		return nil, false
	}
	v = r.take(int(n))
	if v == nil && r.err == nil {
		v = []byte{}
	}
	return v, false
}

func (r *reader) stringList() []string {
	n := int(r.short())
	var out []string
	for i := 0; i < n && r.err == nil; i++ {
		out = append(out, r.string())
	}
	return out
}

func (r *reader) stringMap() map[string]string {
	n := int(r.short())
	out := make(map[string]string, n)
	for i := 0; i < n && r.err == nil; i++ {
		k := r.string()
		out[k] = r.string()
	}
	return out
}

func (r *reader) bytesMap() map[string][]byte {
	n := int(r.short())
	out := make(map[string][]byte, n)
	for i := 0; i < n && r.err == nil; i++ {
		k := r.string()
		out[k] = r.bytes()
	}
	return out
}

// writer encodes the same notations, appending to b.
type writer struct{ b []byte }

func (w *writer) byte(v byte)    { w.b = append(w.b, v) }
func (w *writer) short(v uint16) { w.b = binary.BigEndian.AppendUint16(w.b, v) }
func (w *writer) int(v int32)    { w.b = binary.BigEndian.AppendUint32(w.b, uint32(v)) }
func (w *writer) long(v int64)   { w.b = binary.BigEndian.AppendUint64(w.b, uint64(v)) }

func (w *writer) string(s string) {
	w.short(uint16(len(s)))
	w.b = append(w.b, s...)
}

func (w *writer) longString(s string) {
	w.int(int32(len(s)))
	w.b = append(w.b, s...)
}

func (w *writer) shortBytes(b []byte) {
	w.short(uint16(len(b)))
	w.b = append(w.b, b...)
}

// bytes writes [bytes]; nil is null (length -1).
func (w *writer) bytes(b []byte) {
	if b == nil {
		w.int(-1)
		return
	}
	w.int(int32(len(b)))
	w.b = append(w.b, b...)
}

func (w *writer) stringList(l []string) {
	w.short(uint16(len(l)))
	for _, s := range l {
		w.string(s)
	}
}

func (w *writer) stringMultimap(keys []string, m map[string][]string) {
	w.short(uint16(len(keys)))
	for _, k := range keys {
		w.string(k)
		w.stringList(m[k])
	}
}
