package partitioner

import (
	"fmt"
	"strings"
)

// Range is the ring interval (Start, End]: Start excluded, End included,
// going clockwise from Start. When Start >= End the interval runs past the
// maximum token, wraps to the minimum and continues to End, so:
//
//   - (t, t] is the whole ring, for any t (Cassandra treats (min, min] and
//     (t, t] alike);
//   - (t, min] runs from t to the end of the ring;
//   - (min, t] runs from the start of the ring to t.
//
// Both tokens must be of the same Kind.
type Range struct{ Start, End Token }

// Contains reports whether t lies in (Start, End], as Cassandra's
// Range.contains decides it. The minimum token is contained exactly when the
// range wraps in the Start >= End sense, e.g. in (t, min] and (t, t].
func (r Range) Contains(t Token) bool {
	if Compare(r.Start, r.End) >= 0 {
		return Compare(t, r.Start) > 0 || Compare(r.End, t) >= 0
	}
	return Compare(t, r.Start) > 0 && Compare(r.End, t) >= 0
}

// IsWrapAround reports whether the range truly crosses the end of the ring:
// Start >= End and End is not the minimum token. This is Cassandra's
// Range.isTrulyWrapAround. Cassandra's plain isWrapAround (Start >= End) also
// counts (t, min] and (min, min], which end at the ring's end rather than
// crossing it; here those are not wrap-around.
func (r Range) IsWrapAround() bool {
	return Compare(r.Start, r.End) >= 0 && !r.End.IsMinimum()
}

// Unwrap splits the range into pieces that do not cross the end of the ring,
// in ring order. Every piece has Start < End with End a real token (never the
// minimum), so a key token k is in a piece exactly when
// Start < k && k <= End, with no special cases:
//
//	(a, b], a < b          -> (a, b]
//	(a, b], a >= b, b!=min -> (a, max], (min, b]   ((a, max] left out if a == max)
//	(a, min], a != min     -> (a, max]             (nothing if a == max)
//	(min, min]             -> (min, max]
//
// The pieces hold the same key tokens as r. They may leave out the minimum
// token, which no key has; that differs from Cassandra's Range.unwrap, which
// keeps ends of the form (a, min].
//
// Start and End must be tokens of p; mixing partitioners is a bug and panics.
func (r Range) Unwrap(p Partitioner) []Range {
	checkKind(p.Kind(), "Range.Unwrap", r.Start, r.End)
	if Compare(r.Start, r.End) < 0 {
		return []Range{r}
	}
	minT, maxT := p.MinToken(), p.MaxToken()
	pieces := make([]Range, 0, 2)
	if Compare(r.Start, maxT) < 0 {
		pieces = append(pieces, Range{Start: r.Start, End: maxT})
	}
	if !r.End.IsMinimum() {
		pieces = append(pieces, Range{Start: minT, End: r.End})
	}
	return pieces
}

// Bounds are the tokens of range r, which must not wrap (Unwrap's pieces),
// as a scan takes them: from inclusive, to exclusive, nil for an open end
// (from after the minimum token, to past p's largest).
func (r Range) Bounds(p Partitioner) (from, to *Token) {
	checkKind(p.Kind(), "Range.Bounds", r.Start, r.End)
	if !r.Start.IsMinimum() {
		t := r.Start.successor()
		from = &t
	}
	if Compare(r.End, p.MaxToken()) < 0 {
		t := r.End.successor()
		to = &t
	}
	return from, to
}

// String formats the range as Cassandra does: "(start,end]".
func (r Range) String() string {
	return "(" + r.Start.String() + "," + r.End.String() + "]"
}

// ParseRange reads the String form "(start,end]" with tokens of p.
func ParseRange(p Partitioner, s string) (Range, error) {
	inner, ok := strings.CutPrefix(s, "(")
	if ok {
		inner, ok = strings.CutSuffix(inner, "]")
	}
	start, end, found := strings.Cut(inner, ",")
	if !ok || !found {
		return Range{}, fmt.Errorf("partitioner: invalid range %s: want \"(start,end]\"", quoteInput(s))
	}
	st, err := p.ParseToken(start)
	if err != nil {
		return Range{}, fmt.Errorf("partitioner: range %s start: %w", quoteInput(s), err)
	}
	et, err := p.ParseToken(end)
	if err != nil {
		return Range{}, fmt.Errorf("partitioner: range %s end: %w", quoteInput(s), err)
	}
	return Range{Start: st, End: et}, nil
}
