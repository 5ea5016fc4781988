package cqlsh

import (
	"testing"

	"github.com/sibyldb/sibyl/cqltype"
)

// TestCopyUserTypeNullFields: a user type's null fields are written as
// cqlsh 4.1's COPY TO writes them (its NULL text, empty by default), and
// read back as null, from that form and from "null".
func TestCopyUserTypeNullFields(t *testing.T) {
	addr := cqltype.UDTOf("ks", "addr", []string{"street", "zip"}, []*cqltype.Type{cqltype.TextType, cqltype.IntType}, true)
	value := cqltype.EncodeTuple([][]byte{[]byte("Side"), nil})
	for _, c := range []struct{ options, written string }{
		{"", "{street: 'Side', zip: }"},
		{"NULL = '<null>'", "{street: 'Side', zip: <null>}"},
	} {
		opts, err := parseCopyOptions(c.options, "TO", "ks", "t")
		if err != nil {
			t.Fatal(err)
		}
		if got := exportValue(addr, &rawValue{data: value}, &opts); got != c.written {
			t.Fatalf("with %q exported %q, want %q", c.options, got, c.written)
		}
		for _, field := range []string{c.written, "{street: 'Side', zip: null}"} {
			lit, err := importLiteral(addr, field, &opts)
			if err != nil || lit != "{street: 'Side', zip: null}" {
				t.Errorf("with %q imported %q as %q, %v", c.options, field, lit, err)
			}
		}
	}
}
