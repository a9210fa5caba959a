package controllers

import (
	"fmt"
	"time"

	"github.com/robfig/cron/v3"
)

// cronSchedule is a parsed spec.schedule read in its time zone.
type cronSchedule struct {
	sched cron.Schedule
	loc   *time.Location
}

// parseSchedule reads a five-field cron line or a descriptor (@daily) in the given IANA zone (UTC when
// empty); the error names the field to fix.
func parseSchedule(spec string, zone *string) (*cronSchedule, error) {
	loc := time.UTC
	if zone != nil {
		l, err := time.LoadLocation(*zone)
		if err != nil {
			return nil, fmt.Errorf("spec.timeZone %q is not a time zone this operator knows (an IANA name such as Europe/Berlin): %v", *zone, err)
		}
		loc = l
	}
	s, err := cron.ParseStandard(spec)
	if err != nil {
		return nil, fmt.Errorf("spec.schedule %q is not a cron schedule (five fields: minute hour day-of-month month day-of-week, or @hourly, @daily, @weekly, @monthly): %v", spec, err)
	}
	cs := &cronSchedule{sched: s, loc: loc}
	if cs.next(time.Now()).IsZero() {
		// e.g. "0 0 30 2 *": accepted by the parser, due never
		return nil, fmt.Errorf("spec.schedule %q never comes due (no such day within five years)", spec)
	}
	return cs, nil
}

// next is the first time the schedule is due after t.
func (c *cronSchedule) next(t time.Time) time.Time {
	return c.sched.Next(t.In(c.loc))
}

// dueRun is the most recent time the schedule was due in (after, now], and how many due times were
// passed over to reach it (runs that were missed while the operator was down, or waited under Forbid).
// ok is false when nothing is due.
func (c *cronSchedule) dueRun(after, now time.Time) (due time.Time, skipped int, ok bool) {
	t := c.next(after)
	if t.IsZero() || t.After(now) {
		return time.Time{}, 0, false
	}
	// walk in steps; past a long outage, start again a few periods before now instead of walking every
	// minute of it (the due times in between are counted, not visited)
	if p := c.period(now); now.Sub(t) > 1000*p {
		from := now.Add(-2 * p)
		skipped = int(from.Sub(t) / p)
		t = c.next(from)
		if t.IsZero() || t.After(now) {
			return time.Time{}, 0, false
		}
	}
	for n := c.next(t); !n.IsZero() && !n.After(now); n = c.next(t) {
		t = n
		skipped++
	}
	return t, skipped, true
}

// period is the schedule's interval around t (the gap between two due times), at least a minute.
func (c *cronSchedule) period(t time.Time) time.Duration {
	a := c.next(t)
	if b := c.next(a); !a.IsZero() && !b.IsZero() && b.Sub(a) > time.Minute {
		return b.Sub(a)
	}
	return time.Minute
}
