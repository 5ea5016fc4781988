package cqlsh

import (
	"slices"
	"testing"
)

type fakeSchema map[string]map[string][]string // keyspace → table → columns

func (f fakeSchema) Keyspaces() []string {
	var out []string
	for k := range f {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func (f fakeSchema) Tables(ks string) []string {
	var out []string
	for t := range f[ks] {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

func (f fakeSchema) Columns(ks, t string) []string { return f[ks][t] }
func (f fakeSchema) Types(ks string) []string      { return []string{"address"} }

func TestCompletion(t *testing.T) {
	c := &completer{schema: fakeSchema{
		"shop":  {"orders": {"id", "item", "qty"}, "users": {"uid", "name"}},
		"other": {"events": {"day", "at"}},
	}, keyspace: func() string { return "shop" }}
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"SEL", []string{"ECT "}},
		{"USE o", []string{"ther "}},
		{"SELECT * FROM o", []string{"rders ", "ther "}},
		{"SELECT * FROM other.e", []string{"vents "}},
		// Before FROM names the table, keywords alone.
		{"SELECT i", []string{"F ", "N ", "NDEX ", "NSERT ", "NTO "}},
		{"SELECT * FROM orders WHERE i", []string{"d ", "tem ", "F ", "N ", "NDEX ", "NSERT ", "NTO "}},
		{"INSERT INTO users (n", []string{"ame ", "OT ", "ULL "}},
		{"UPDATE other.events SET d", []string{"ay ", "ELETE ", "ESC ", "ESCRIBE ", "ISTINCT ", "ROP "}},
		{"CREATE TABLE t (k in", []string{"et ", "t "}},
		{"CREATE TABLE t (k int, v a", []string{"scii ", "ddress "}},
		{"ALTER TABLE orders ADD note t", []string{"ext ", "ime ", "imestamp ", "imeuuid ", "inyint ", "uple "}},
	} {
		got, _ := c.Do([]rune(tc.line), len([]rune(tc.line)))
		var strs []string
		for _, g := range got {
			strs = append(strs, string(g))
		}
		if !slices.Equal(strs, tc.want) {
			t.Errorf("%q completes to %q, want %q", tc.line, strs, tc.want)
		}
	}
}
