package schema

import (
	"reflect"
	"strings"
	"testing"
)

func TestIndexTargetsRoundTrip(t *testing.T) {
	for _, want := range [][]IndexTarget{
		{{Column: "v"}},
		{{Column: "m", Modifier: "keys"}},
		{{Column: "Mixed Case", Modifier: "entries"}},
		{{Column: `a"b,c`}, {Column: "select", Modifier: "full"}},
	} {
		var parts []string
		for _, tg := range want {
			parts = append(parts, tg.CQL())
		}
		ix := &Index{Name: "i", Options: map[string]string{IndexTargetOption: strings.Join(parts, ",")}}
		got, err := ix.Targets()
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("targets %q parse to %v, %v; want %v", ix.Options[IndexTargetOption], got, err, want)
		}
		for _, tg := range want {
			if !ix.DependsOn(tg.Column) {
				t.Errorf("index on %q does not depend on %q", ix.Options[IndexTargetOption], tg.Column)
			}
		}
		if ix.DependsOn("other") {
			t.Errorf("index on %q depends on other", ix.Options[IndexTargetOption])
		}
	}
	if _, err := (&Index{Name: "i", Options: map[string]string{IndexTargetOption: `"open`}}).Targets(); err == nil {
		t.Error("an unterminated quoted target parses")
	}
}
