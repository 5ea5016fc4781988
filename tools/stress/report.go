package stress

import (
	"encoding/json"
	"fmt"
	"html"
	"math"
	"os"
	"slices"
	"strings"
)

func writeJSON(path string, s *Summary) error {
	raw, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(raw, '\n'), 0o644)
}

// writePlot writes a self-contained HTML page (inline SVG, no scripts, no
// network) with the throughput and the latency percentiles over time, and
// each operation's latency distribution.
func writePlot(path string, s *Summary) error {
	var b strings.Builder
	fmt.Fprintf(&b, `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>sibyl stress: %s</title>
<style>body{font-family:sans-serif;margin:2em;color:#222} svg{background:#fafafa;border:1px solid #ddd;margin:1em 0}
table{border-collapse:collapse} td,th{padding:4px 10px;border-bottom:1px solid #ddd;text-align:right}</style></head><body>
<h1>sibyl stress: %s</h1><p>%d operations in %.1f s.</p>
`, html.EscapeString(s.Workload), html.EscapeString(s.Workload), s.Total, s.Seconds)
	b.WriteString("<table><tr><th>operation</th><th>count</th><th>ops/s</th><th>mean</th><th>p50</th><th>p99</th><th>p99.9</th><th>p99.99</th><th>max (ms)</th></tr>\n")
	for _, op := range slices.Sorted(mapKeys(s.Ops)) {
		o := s.Ops[op]
		fmt.Fprintf(&b, "<tr><td>%s</td><td>%d</td><td>%.0f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td></tr>\n",
			html.EscapeString(op), o.Count, o.OpsPerSec, o.Mean, o.P50, o.P99, o.P999, o.P9999, o.Max)
	}
	b.WriteString("</table>\n")
	var secs, ops, p50, p99, p999 []float64
	for _, p := range s.PerSecond {
		secs = append(secs, float64(p.Second))
		ops, p50, p99, p999 = append(ops, p.OpsPerSec), append(p50, p.P50), append(p99, p.P99), append(p999, p.P999)
	}
	b.WriteString("<h2>Throughput (ops/s)</h2>\n")
	b.WriteString(chart(secs, []series{{"ops/s", "#1f77b4", ops}}, "seconds", roundTicks(secs)))
	b.WriteString("<h2>Latency over time (ms)</h2>\n")
	b.WriteString(chart(secs, []series{{"p50", "#2ca02c", p50}, {"p99", "#ff7f0e", p99}, {"p99.9", "#d62728", p999}}, "seconds", roundTicks(secs)))
	if v := s.Verify; v != nil {
		fmt.Fprintf(&b, "<h2>Verify</h2>\n<table><tr><th>reads checked</th><th>stale</th><th>writes read back</th><th>lost</th><th>unreadable</th></tr>\n"+
			"<tr><td>%d</td><td>%d</td><td>%d</td><td>%d</td><td>%d</td></tr></table>\n", v.Checked, v.Stale, v.ReadBack, v.Lost, v.Unreadable)
		if v.Note != "" {
			fmt.Fprintf(&b, "<p>%s</p>\n", html.EscapeString(v.Note))
		}
		var stale []float64
		for _, p := range s.PerSecond {
			stale = append(stale, float64(p.Stale))
		}
		b.WriteString("<h3>Stale reads a second</h3>\n")
		b.WriteString(chart(secs, []series{{"stale", "#d62728", stale}}, "seconds", roundTicks(secs)))
	}
	b.WriteString("<h2>Latency distribution (ms, by percentile)</h2>\n")
	colors := []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd"}
	var dist []series
	var xs []float64
	for i, op := range slices.Sorted(mapKeys(s.Ops)) {
		var ys []float64
		xs = xs[:0]
		for _, d := range s.Ops[op].Distribution {
			// The x axis is the percentile's "nines": 1/(1-q).
			xs = append(xs, math.Log10(1/math.Max(1-d[0]/100, 1e-6)))
			ys = append(ys, d[1])
		}
		dist = append(dist, series{op, colors[i%len(colors)], ys})
	}
	b.WriteString(chart(xs, dist, "percentile", percentileTicks))
	b.WriteString("</body></html>\n")
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

type series struct {
	name, color string
	ys          []float64
}

// tick is a labelled place on the x axis.
type tick struct {
	x     float64
	label string
}

// percentileTicks label the distribution's x axis, which counts nines.
var percentileTicks = []tick{{0, "0%"}, {1, "90%"}, {2, "99%"}, {3, "99.9%"}, {4, "99.99%"}, {5, "99.999%"}, {6, "100%"}}

// roundTicks are up to about six ticks on round numbers over xs.
func roundTicks(xs []float64) []tick {
	if len(xs) == 0 {
		return nil
	}
	lo, hi := slices.Min(xs), slices.Max(xs)
	if hi == lo {
		return []tick{{lo, trimFloat(lo)}}
	}
	step := niceStep((hi - lo) / 5)
	var out []tick
	for x := math.Ceil(lo/step) * step; x <= hi+1e-9; x += step {
		out = append(out, tick{x, trimFloat(x)})
	}
	return out
}

// chart draws line series over xs as an SVG.
func chart(xs []float64, ss []series, xLabel string, xTicks []tick) string {
	const w, h, left, bottom, top, right = 800.0, 300.0, 70.0, 40.0, 20.0, 20.0
	if len(xs) == 0 {
		return "<p>(no data)</p>\n"
	}
	minX, maxX := slices.Min(xs), slices.Max(xs)
	maxY := 0.0
	for _, s := range ss {
		for _, y := range s.ys {
			maxY = math.Max(maxY, y)
		}
	}
	if maxX == minX {
		maxX = minX + 1
	}
	if maxY == 0 {
		maxY = 1
	}
	// The axis ends on a round number, with up to four round steps.
	step := niceStep(maxY / 4)
	ticks := int(math.Ceil(maxY/step - 1e-9))
	maxY = step * float64(ticks)
	px := func(x float64) float64 { return left + (x-minX)/(maxX-minX)*(w-left-right) }
	py := func(y float64) float64 { return h - bottom - y/maxY*(h-bottom-top) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f">`+"\n", w, h, w, h)
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#888"/>`, left, h-bottom, w-right, h-bottom)
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#888"/>`+"\n", left, top, left, h-bottom)
	for i := 0; i <= ticks; i++ {
		y := step * float64(i)
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" font-size="11" text-anchor="end">%s</text>`+"\n", left-6, py(y)+4, trimFloat(y))
	}
	for _, t := range xTicks {
		if t.x < minX || t.x > maxX {
			continue
		}
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#888"/>`, px(t.x), h-bottom, px(t.x), h-bottom+4)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" font-size="11" text-anchor="middle">%s</text>`+"\n", px(t.x), h-bottom+16, html.EscapeString(t.label))
	}
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="11" text-anchor="middle">%s</text>`+"\n", left+(w-left-right)/2, h-6, html.EscapeString(xLabel))
	for i, s := range ss {
		var pts []string
		for j, y := range s.ys {
			if j < len(xs) {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(xs[j]), py(y)))
			}
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", s.color, strings.Join(pts, " "))
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="12" fill="%s">%s</text>`+"\n", left+10+float64(i)*120, top+12, s.color, html.EscapeString(s.name))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// niceStep is the least of 1, 2, 2.5 and 5 times a power of ten that is
// at least v.
func niceStep(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func trimFloat(f float64) string {
	s := fmt.Sprintf("%.2f", f)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
