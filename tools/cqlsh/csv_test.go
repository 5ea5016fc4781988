package cqlsh

import (
	"bufio"
	"io"
	"reflect"
	"strings"
	"testing"
)

// The expected outputs are what Python 3.11's csv module writes and reads
// with the same dialects (csv.writer and csv.reader with quotechar,
// escapechar, delimiter and doublequote as cqlsh sets them).

var csvRecords = [][]string{
	{`a\b`, `q"x`, "c,d", "n\nl", "", `x"y,z`, " s ", `t\"u`},
	{""},
	{"a", "", "1.5"},
	{"r\rx", "|", "'"},
}

func TestCSVWriterMatchesPython(t *testing.T) {
	for _, c := range []struct {
		d    csvDialect
		want string
	}{
		{csvDialect{delimiter: ',', quote: '"', escape: '\\'},
			"a\\\\b,q\\\"x,\"c,d\",\"n\nl\",,\"x\\\"y,z\", s ,t\\\\\\\"u\r\n\"\"\r\na,,1.5\r\n\"r\rx\",|,'\r\n"},
		{csvDialect{delimiter: '|', quote: '"', escape: '\\'},
			"a\\\\b|q\\\"x|c,d|\"n\nl\"||x\\\"y,z| s |t\\\\\\\"u\r\n\"\"\r\na||1.5\r\n\"r\rx\"|\"|\"|'\r\n"},
		{csvDialect{delimiter: ',', quote: '\''},
			"a\\b,q\"x,'c,d','n\nl',,'x\"y,z', s ,t\\\"u\r\n''\r\na,,1.5\r\n'r\rx',|,''''\r\n"},
	} {
		var b strings.Builder
		w := &csvWriter{w: &b, d: c.d}
		for _, r := range csvRecords {
			if err := w.write(r); err != nil {
				t.Fatal(err)
			}
		}
		if b.String() != c.want {
			t.Errorf("dialect %+v writes\n%q\nwant\n%q", c.d, b.String(), c.want)
		}
		// And reads back what it wrote.
		r := &csvReader{r: bufio.NewReader(strings.NewReader(b.String())), d: c.d}
		for i, want := range csvRecords {
			got, err := r.read()
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("dialect %+v record %d reads %q, %v; want %q", c.d, i, got, err, want)
			}
		}
		if _, err := r.read(); err != io.EOF {
			t.Errorf("dialect %+v: %v after the last record, want EOF", c.d, err)
		}
	}
}

func TestCSVReaderMatchesPython(t *testing.T) {
	for _, c := range []struct {
		d    csvDialect
		in   string
		want [][]string
	}{
		{csvDialect{delimiter: ',', quote: '"', escape: '\\'}, "a\\,b,\"c\\\"d\",\"e\"\"f\",g\\\\h,\"i\nj\",k\"l\r\n\r\nx,\"\"\n",
			[][]string{{"a,b", "c\"d", "e\"f\"", "g\\h", "i\nj", "k\"l"}, {}, {"x", ""}}},
		{csvDialect{delimiter: ',', quote: '\''}, "'a''b',c''d,'e,f'\n", [][]string{{"a'b", "c''d", "e,f"}}},
	} {
		r := &csvReader{r: bufio.NewReader(strings.NewReader(c.in)), d: c.d}
		var got [][]string
		for {
			rec, err := r.read()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%q: %v", c.in, err)
			}
			got = append(got, rec)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q reads %q, want %q", c.in, got, c.want)
		}
	}
	// As Python, not strict: an unterminated quoted field ends with the
	// data.
	r := &csvReader{r: bufio.NewReader(strings.NewReader("a,\"open\nline")), d: csvDialect{delimiter: ',', quote: '"', escape: '\\'}}
	if rec, err := r.read(); err != nil || !reflect.DeepEqual(rec, []string{"a", "open\nline"}) {
		t.Errorf("an unterminated quoted field reads as %q, %v", rec, err)
	}
}
