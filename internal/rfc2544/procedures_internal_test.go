package rfc2544

import "testing"

// The spread of repetitions, worked by hand: 4, 6, 8 and 10 have mean 7, sample variance 20 / 3 and so a
// standard deviation of 2.58 (rounded to 3); one value has none.
func TestSpreadByHand(t *testing.T) {
	for _, c := range []struct {
		v                   []float64
		n, mean, sd, lo, hi int64
	}{
		{[]float64{4, 6, 8, 10}, 4, 7, 3, 4, 10},
		{[]float64{1000, 1000, 1200}, 3, 1067, 115, 1000, 1200},
		{[]float64{5}, 1, 5, 0, 5, 5},
	} {
		s := spread(c.v)
		if int64(s.Repetitions) != c.n || s.Mean != c.mean || s.StdDev != c.sd || s.Min != c.lo || s.Max != c.hi {
			t.Errorf("spread(%v) = %+v, want n %d mean %d sd %d min %d max %d", c.v, s, c.n, c.mean, c.sd, c.lo, c.hi)
		}
	}
}
