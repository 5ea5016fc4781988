package stress

import "testing"

func TestNiceStep(t *testing.T) {
	for _, c := range []struct{ v, want float64 }{
		{10993, 20000}, {9000, 10000}, {2400, 2500}, {1.2, 2}, {0.37, 0.5}, {5, 5}, {0.06, 0.1},
	} {
		if got := niceStep(c.v); got != c.want {
			t.Errorf("niceStep(%v) = %v, want %v", c.v, got, c.want)
		}
	}
}
