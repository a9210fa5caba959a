package plan

import "testing"

func TestFormatPercentWritesSmallValuesOut(t *testing.T) {
	for _, c := range []struct {
		in   float64
		want string
	}{
		{0, "0"},
		{0.00004, "0.00004"},
		{0.0000412345, "0.0000412"},
		{0.0041234, "0.00412"},
		{0.0099, "0.0099"},
		{0.01, "0.01"},
		{1.005, "1.00"},
		{12.5, "12.50"},
		{100, "100.00"},
	} {
		if got := FormatPercent(c.in); got != c.want {
			t.Errorf("FormatPercent(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}
