package controllers

import (
	"strings"
	"testing"
	"time"
)

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestDueRunOnAFakeClock(t *testing.T) {
	berlin := "Europe/Berlin"
	cases := []struct {
		name, schedule string
		zone           *string
		after, now     string
		due            string // empty: nothing due
		skipped        int
	}{
		{"nothing due yet", "0 2 * * *", nil, "2026-11-24T02:00:00Z", "2026-11-25T01:59:59Z", "", 0},
		{"due on the minute", "0 2 * * *", nil, "2026-11-24T02:00:00Z", "2026-11-25T02:00:00Z", "2026-11-25T02:00:00Z", 0},
		{"the operator was down three nights: only the newest runs", "0 2 * * *", nil, "2026-11-21T02:00:00Z", "2026-11-24T09:00:00Z", "2026-11-24T02:00:00Z", 2},
		{"working days skip the weekend", "30 1 * * 1-5", nil, "2026-11-27T01:30:00Z", "2026-11-30T01:29:00Z", "", 0},
		{"read in the schedule's time zone", "0 2 * * *", &berlin, "2026-11-24T01:00:00Z", "2026-11-25T01:00:00Z", "2026-11-25T01:00:00Z", 0},
		{"summer time moves it in UTC", "0 2 * * *", &berlin, "2026-07-01T00:00:00Z", "2026-07-02T00:00:00Z", "2026-07-02T00:00:00Z", 0},
		{"descriptor", "@weekly", nil, "2026-11-22T00:00:00Z", "2026-11-29T00:00:01Z", "2026-11-29T00:00:00Z", 0},
		{"every minute missed for a month", "* * * * *", nil, "2026-10-24T00:00:00Z", "2026-11-24T00:00:30Z", "2026-11-24T00:00:00Z", -1},
		{"hourly missed for a year", "0 * * * *", nil, "2025-11-24T00:00:00Z", "2026-11-24T00:30:00Z", "2026-11-24T00:00:00Z", -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cs, err := parseSchedule(c.schedule, c.zone)
			if err != nil {
				t.Fatal(err)
			}
			due, skipped, ok := cs.dueRun(at(c.after), at(c.now))
			if c.due == "" {
				if ok {
					t.Fatalf("due %s, want nothing", due)
				}
				return
			}
			if !ok || !due.Equal(at(c.due)) {
				t.Fatalf("due %s (%v), want %s", due.UTC(), ok, c.due)
			}
			if c.skipped >= 0 && skipped != c.skipped {
				t.Errorf("skipped %d, want %d", skipped, c.skipped)
			}
		})
	}
}

func TestScheduleErrorsNameTheField(t *testing.T) {
	mars := "Mars/Olympus"
	for _, c := range []struct {
		schedule string
		zone     *string
		want     string
	}{
		{"0 25 * * *", nil, "spec.schedule"},
		{"every night", nil, "spec.schedule"},
		{"0 2 * * *", &mars, "spec.timeZone"},
		{"0 0 30 2 *", nil, "never comes due"},
	} {
		if _, err := parseSchedule(c.schedule, c.zone); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q %v: %v, want an error naming %s", c.schedule, c.zone, err, c.want)
		}
	}
}
