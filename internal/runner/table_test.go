package runner

import (
	"strings"
	"testing"

	"linerate.dev/linerate/api/v1alpha1"
)

// A row whose NDR is only a lower bound says so, and where the DUT lost frames on its own (its upper bound);
// a measured NDR carries no marks.
func TestRowMarksSayWhatTheNDRIs(t *testing.T) {
	lost := &v1alpha1.Rate{FramesPerSecond: 11970}
	for _, c := range []struct {
		name         string
		limited      bool
		undetermined string
		margin       string
		lostAt       *v1alpha1.Rate
		want         []string
	}{
		{"measured", false, "", "", lost, nil},
		{"tester limit", true, "", "", nil, []string{"(tester limit)"}},
		{"tester limit, DUT lost above", true, "", "", lost, []string{"(tester limit)", "(the DUT lost frames at 11,970 frames/s)"}},
		{"undetermined, DUT lost above", false, "trial cap", "", lost, []string{"(undetermined: a lower bound)", "(the DUT lost frames at 11,970 frames/s)"}},
		{"near the ceiling", true, "", "1.2", nil, []string{"(tester limit)", "(1.2% below the tester's ceiling)"}},
	} {
		got := rowMarks(c.limited, c.undetermined, c.margin, c.lostAt)
		if strings.Join(c.want, " ") != strings.TrimSpace(got) {
			t.Errorf("%s: %q, want %q", c.name, got, strings.Join(c.want, " "))
		}
	}
}
