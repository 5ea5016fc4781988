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
	opts, err := parseCopyOptions("", "TO", "ks", "t")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := exportValue(addr, &rawValue{data: value}, &opts), "{street: 'Side', zip: }"; got != want {
		t.Fatalf("exported %q, want %q", got, want)
	}
	for _, field := range []string{"{street: 'Side', zip: }", "{street: 'Side', zip: null}"} {
		lit, err := importLiteral(addr, field, &opts)
		if err != nil || lit != "{street: 'Side', zip: null}" {
			t.Errorf("imported %q as %q, %v", field, lit, err)
		}
	}
}
