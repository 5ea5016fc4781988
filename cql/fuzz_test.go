package cql

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// checkRoundTrip asserts property P2: the rendering of a parsed statement
// parses back to an equal tree and renders the same again.
func checkRoundTrip(t testing.TB, input string, st Statement) {
	t.Helper()
	text := st.String()
	again, err := Parse(text)
	if err != nil {
		t.Fatalf("input %q renders as %q, which does not parse: %v", input, text, err)
	}
	if !reflect.DeepEqual(st, again) {
		t.Fatalf("input %q renders as %q, which parses to a different tree:\n first %#v\nsecond %#v", input, text, st, again)
	}
	if text2 := again.String(); text2 != text {
		t.Fatalf("input %q renders as %q, then as %q", input, text, text2)
	}
	checkMarkers(t, input, st)
}

// checkMarkers asserts that a statement's bind markers are numbered 0 to
// n-1 without gaps, which also shows that WalkExprs reaches every place a
// marker can be.
func checkMarkers(t testing.TB, input string, st Statement) {
	t.Helper()
	for i, m := range BindMarkers(st) {
		if m.Index != i {
			t.Fatalf("input %q: marker %d of %d has index %d", input, i, len(BindMarkers(st)), m.Index)
		}
	}
}

// checkSyntaxError asserts property P3 for an error from Parse or ParseAll.
func checkSyntaxError(t testing.TB, input string, err error) {
	t.Helper()
	var se *SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("input %q: error %v (%T) is not a *SyntaxError", input, err, err)
	}
	// The end of input has no place (line 0:-1, as in Cassandra), and
	// then no snippet either.
	atEnd := se.Line == 0 && se.Column == -1
	if !atEnd && (se.Line < 1 || se.Column < 0) || se.Message == "" || atEnd && se.Snippet != "" {
		t.Fatalf("input %q: error without a position or message: %#v", input, se)
	}
	if se.Snippet != "" && (!strings.HasPrefix(se.Snippet, " (") || !strings.HasSuffix(se.Snippet, ")") || !strings.Contains(se.Snippet, "[")) {
		t.Fatalf("input %q: malformed snippet %q", input, se.Snippet)
	}
}

func FuzzParse(f *testing.F) {
	for _, c := range parseCases {
		f.Add(c.in)
	}
	for _, c := range errorCases {
		f.Add(c.in)
	}
	for _, c := range scriptCases {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, input string) {
		st, err := Parse(input)
		if err != nil {
			checkSyntaxError(t, input, err)
		} else {
			checkRoundTrip(t, input, st)
		}
		sts, err := ParseAll(input)
		if err != nil {
			checkSyntaxError(t, input, err)
			return
		}
		for _, st := range sts {
			checkRoundTrip(t, input, st)
		}
	})
}
