package estimate

import (
	"fmt"
	"strings"
	"time"
)

// Range is " (low to high: the DUT decides ...)" for an expected time t, "" when the range is within an
// eighth of it; decides names what decides it (TesterDecides: the tester).
func Range(t, low, high time.Duration, decides []string) string {
	if len(decides) == 0 || (high <= t+t/8 && low >= t-t/8) {
		return ""
	}
	var dut []string
	tester := ""
	for _, d := range decides {
		if d == TesterDecides {
			tester = "the tester decides how often it spoils a trial"
		} else {
			dut = append(dut, d)
		}
	}
	who := tester
	if len(dut) > 0 {
		who = "the DUT decides " + joinList(dut)
		if tester != "" {
			who += "; " + tester
		}
	}
	return fmt.Sprintf(" (%s to %s: %s)", Round(low), Round(high), who)
}

// TesterDecides is what the tester, not the DUT, decides of a step's length.
const TesterDecides = "tester"

// Round rounds a duration as the estimate says it: to the second from a minute up, else to a tenth.
func Round(d time.Duration) time.Duration {
	if d >= time.Minute {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}

// joinList joins items as "a, b and c".
func joinList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
