package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// TimelineConfig asks a trial to keep a timeline (PROTOCOL.md, "The timeline"): every frame judged
// received or lost Settle after it was due, counted in bins of Bin by when it was due, and every run of at
// least OutageFrames consecutive losses reported as an outage; the bins the tester spoiled are flagged.
type TimelineConfig struct {
	Bin    time.Duration
	Settle time.Duration // 0: the engine's default (200 ms)
	// OutageFrames is the shortest run of consecutive losses that is an outage (0: the engine's, 2).
	OutageFrames int64
	// TesterLag and TesterGap are how far a sending lane may fall behind and how long a worker may go
	// between two passes before the bins then due are the tester's (0: the engine's, 1 ms).
	TesterLag, TesterGap time.Duration
}

// Timeliner is an engine that keeps timelines: one engine for both ends of its streams (a stream split
// over two engines keeps none).
type Timeliner interface {
	// Timeline returns the bins from index fromBin and the outages from number fromOutage of the current
	// or last trial; callable while the trial runs.
	Timeline(ctx context.Context, fromBin, fromOutage int64) (*Timeline, error)
}

// Timeline is what TIMELINE answers.
type Timeline struct {
	Trial    int    `json:"trial"`
	State    string `json:"state"`
	BinMs    int64  `json:"bin_ms"`
	SettleMs int64  `json:"settle_ms"`
	// StartNs is when the measurement started, on the engine's clock (TIME): bin i starts at
	// StartNs + i × BinMs.
	StartNs int64            `json:"start_ns"`
	Streams []TimelineStream `json:"streams"`
}

// TimelineStream is one stream's timeline so far.
type TimelineStream struct {
	ID        int     `json:"id"`
	RateFPS   float64 `json:"rate_fps"`
	Positions int64   `json:"positions"`
	Judged    int64   `json:"judged"`
	Received  int64   `json:"received"`
	Lost      int64   `json:"lost"`
	// Unsent positions were never sent (the trial ended first): neither received nor lost.
	Unsent    int64 `json:"unsent"`
	Scattered int64 `json:"scattered"`
	// LateAfterSettle frames arrived after Settle: lost in their bins, received in RESULT.
	LateAfterSettle int64         `json:"late_after_settle"`
	BinsDone        int64         `json:"bins_done"`
	FirstBin        int64         `json:"first_bin"`
	Bins            []TimelineBin `json:"bins"`
	OutagesFound    int64         `json:"outages_found"`
	OutageFrames    int64         `json:"outage_frames"`
	FirstOutage     int64         `json:"first_outage"`
	Outages         []Outage      `json:"outages"`
}

// TimelineBin is one finished bin: its positions, those received, and the tester's flags (Bin*).
type TimelineBin struct {
	Index, Sent, Received, Lost int64
	Flags                       int
}

// UnmarshalJSON reads a bin as the engine sends it: [index, sent, received, lost, flags].
func (b *TimelineBin) UnmarshalJSON(data []byte) error {
	var v [5]int64
	if err := json.Unmarshal(data, &v); err != nil {
		return fmt.Errorf("timeline bin %s: %w", data, err)
	}
	b.Index, b.Sent, b.Received, b.Lost, b.Flags = v[0], v[1], v[2], v[3], int(v[4])
	return nil
}

// The tester's flags of a bin (PROTOCOL.md): a bin with any is the tester's, its loss never the DUT's.
const (
	BinLag    = 1  // a sending lane fell behind its schedule
	BinPause  = 2  // a worker went too long between passes, and the bin lost a frame
	BinRxDrop = 4  // a port counted drops the tester made
	BinWindow = 8  // the collector read a position its window had already reused
	BinUnsent = 16 // positions the trial ended before sending
)

// BinFlagNames names a bin's flags, for notes.
func BinFlagNames(f int) []string {
	var n []string
	for _, x := range []struct {
		bit  int
		name string
	}{{BinLag, "lag"}, {BinPause, "pause"}, {BinRxDrop, "rx-drop"}, {BinWindow, "window"}, {BinUnsent, "unsent"}} {
		if f&x.bit != 0 {
			n = append(n, x.name)
		}
	}
	return n
}

// Outage is a run of consecutive positions lost.
type Outage struct {
	N        int64 `json:"n"`
	First    int64 `json:"first"`
	Last     int64 `json:"last"`
	Frames   int64 `json:"frames"`
	StartNs  int64 `json:"start_ns"`
	LengthNs int64 `json:"length_ns"`
	// Open: still lost when the trial ended. Tester: a bin it lies in was the tester's.
	Open   bool `json:"open"`
	Tester bool `json:"tester"`
}

// msCeil renders a duration in whole milliseconds, rounded up, at least 1: a limit below a millisecond
// is the engine's finest, never none.
func msCeil(d time.Duration) string {
	return strconv.FormatInt(max(1, int64((d+time.Millisecond-1)/time.Millisecond)), 10)
}

func timelineArgs(t *TimelineConfig) []KV {
	args := []KV{{"bin_ms", ms(t.Bin)}}
	if t.Settle > 0 {
		args = append(args, KV{"settle_ms", msCeil(t.Settle)})
	}
	if t.OutageFrames > 0 {
		args = append(args, KV{"outage_frames", strconv.FormatInt(t.OutageFrames, 10)})
	}
	if t.TesterLag > 0 {
		args = append(args, KV{"tester_lag_ms", msCeil(t.TesterLag)})
	}
	if t.TesterGap > 0 {
		args = append(args, KV{"tester_gap_ms", msCeil(t.TesterGap)})
	}
	return args
}

// Timeline implements Timeliner.
func (c *Client) Timeline(ctx context.Context, fromBin, fromOutage int64) (*Timeline, error) {
	var t Timeline
	err := c.Do(ctx, "TIMELINE", []KV{{"from_bin", strconv.FormatInt(fromBin, 10)},
		{"from_outage", strconv.FormatInt(fromOutage, 10)}, {"max_bins", "8192"}}, &t)
	if err != nil {
		return nil, err
	}
	return &t, nil
}
