// Package units writes measured quantities the way network engineers read them: bit rates with an SI
// prefix, latencies in ns, µs or ms. It is the one place that decides how a number looks in the status,
// the CLI's tables, the report and every message, so the same rate never reads two ways.
package units

import "strconv"

// FormatBits renders a rate in bit/s: "9.412 Gbit/s", "12.35 Mbit/s", "500.0 kbit/s", "12 bit/s".
func FormatBits(bps int64) string {
	f := float64(bps)
	switch {
	case f >= 1e9:
		return strconv.FormatFloat(f/1e9, 'f', 3, 64) + " Gbit/s"
	case f >= 1e6:
		return strconv.FormatFloat(f/1e6, 'f', 2, 64) + " Mbit/s"
	case f >= 1e3:
		return strconv.FormatFloat(f/1e3, 'f', 1, 64) + " kbit/s"
	}
	return strconv.FormatInt(bps, 10) + " bit/s"
}

// FormatNs renders nanoseconds with a readable unit: "1.500 ms", "4.20 µs", "800 ns".
func FormatNs(ns int64) string {
	switch {
	case ns >= 1_000_000:
		return strconv.FormatFloat(float64(ns)/1e6, 'f', 3, 64) + " ms"
	case ns >= 1_000:
		return strconv.FormatFloat(float64(ns)/1e3, 'f', 2, 64) + " µs"
	}
	return strconv.FormatInt(ns, 10) + " ns"
}

// FormatPercentileNs renders a latency percentile as FormatNs does, and one that was left out (0: too few
// frames to support it) as "–".
func FormatPercentileNs(ns int64) string {
	if ns == 0 {
		return "–"
	}
	return FormatNs(ns)
}

// FormatCount renders a count of frames (or frames/s) with thousands separators: "8,928,571".
func FormatCount(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	var b []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, s[i])
	}
	if neg {
		return "-" + string(b)
	}
	return string(b)
}
