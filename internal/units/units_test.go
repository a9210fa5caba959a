package units

import "testing"

func TestFormatting(t *testing.T) {
	for _, c := range []struct {
		bps  int64
		want string
	}{
		{9_412_000_000, "9.412 Gbit/s"}, {10_000_000_000, "10.000 Gbit/s"}, {12_345_678, "12.35 Mbit/s"},
		{500_000, "500.0 kbit/s"}, {999, "999 bit/s"}, {12, "12 bit/s"}, {0, "0 bit/s"},
	} {
		if got := FormatBits(c.bps); got != c.want {
			t.Errorf("FormatBits(%d) = %q, want %q", c.bps, got, c.want)
		}
	}
	for _, c := range []struct {
		ns   int64
		want string
	}{{1_500_000, "1.500 ms"}, {4200, "4.20 µs"}, {800, "800 ns"}} {
		if got := FormatNs(c.ns); got != c.want {
			t.Errorf("FormatNs(%d) = %q, want %q", c.ns, got, c.want)
		}
	}
	for _, c := range []struct {
		n    int64
		want string
	}{{8_928_571, "8,928,571"}, {1000, "1,000"}, {999, "999"}, {0, "0"}, {-1_234_567, "-1,234,567"}, {100_000, "100,000"}} {
		if got := FormatCount(c.n); got != c.want {
			t.Errorf("FormatCount(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}
