package plan

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"linerate.dev/linerate/api/v1alpha1"
)

// MaxCycle bounds an IMIX cycle (frames per schedule repetition) so the schedule stays a small table in the
// engine; weights are reduced by their greatest common divisor first.
const MaxCycle = 65536

// Schedule is an IMIX expanded into the order frames are sent.
type Schedule struct {
	Order            v1alpha1.ImixOrder
	Cycle            []int
	AverageFrameSize float64
	Shares           []v1alpha1.ImixShare
}

// NewSchedule expands a mix. Interleaved uses smooth weighted round robin: at every step each size earns
// its weight and the size with the most credit is sent and pays the total, so every size is spread as
// evenly as the weights allow (7:4:1 gives a,b,a,c,a,b,a,a,b,a,b,a rather than a run of seven small frames).
func NewSchedule(s v1alpha1.ImixSpec) (*Schedule, error) {
	if len(s.Entries) == 0 {
		return nil, fmt.Errorf("entries: at least one entry is needed")
	}
	seen := map[int32]bool{}
	g := 0
	for i, e := range s.Entries {
		if e.Weight <= 0 {
			return nil, fmt.Errorf("entries[%d].weight: must be larger than 0", i)
		}
		if e.FrameSize < 64 || e.FrameSize > MaxFrameSize {
			return nil, fmt.Errorf("entries[%d].frameSize: %d is outside 64..%d", i, e.FrameSize, MaxFrameSize)
		}
		if seen[e.FrameSize] {
			return nil, fmt.Errorf("entries[%d].frameSize: %d appears twice", i, e.FrameSize)
		}
		seen[e.FrameSize] = true
		g = gcd(g, int(e.Weight))
	}
	w := make([]int, len(s.Entries))
	total := 0
	for i, e := range s.Entries {
		w[i] = int(e.Weight) / g
		total += w[i]
	}
	if total > MaxCycle {
		return nil, fmt.Errorf("entries: the weights make a cycle of %d frames, more than %d; use smaller weights", total, MaxCycle)
	}
	order := s.Order
	if order == "" {
		order = v1alpha1.ImixOrderInterleaved
	}
	cycle := make([]int, 0, total)
	credit := make([]int, len(w))
	for range total {
		best := 0
		for i := range w {
			credit[i] += w[i]
			if credit[i] > credit[best] {
				best = i
			}
		}
		credit[best] -= total
		cycle = append(cycle, int(s.Entries[best].FrameSize))
	}
	if order == v1alpha1.ImixOrderRandom {
		r := rand.New(rand.NewPCG(uint64(s.Seed), 0x6c696e6572617465))
		r.Shuffle(len(cycle), func(i, j int) { cycle[i], cycle[j] = cycle[j], cycle[i] })
	}
	sched := &Schedule{Order: order, Cycle: cycle}
	var frameBytes, l1Bytes float64
	for i, e := range s.Entries {
		frameBytes += float64(w[i]) * float64(e.FrameSize)
		l1Bytes += float64(w[i]) * float64(e.FrameSize+20)
	}
	sched.AverageFrameSize = frameBytes / float64(total)
	for i, e := range s.Entries {
		sched.Shares = append(sched.Shares, v1alpha1.ImixShare{
			FrameSize:      e.FrameSize,
			FramesPercent:  FormatPercent(100 * float64(w[i]) / float64(total)),
			L1BytesPercent: FormatPercent(100 * float64(w[i]) * float64(e.FrameSize+20) / l1Bytes),
		})
	}
	return sched, nil
}

// FormatPercent renders a percentage with enough digits to be useful and no more: two decimals, or three
// significant digits below 0.01, written out (0.00004, never 4e-05: a reader of a loss column or a
// Grafana label should not have to parse exponents).
func FormatPercent(v float64) string {
	switch {
	case v == 0:
		return "0"
	case math.Abs(v) < 0.01:
		decimals := 2 - int(math.Floor(math.Log10(math.Abs(v))))
		s := strings.TrimRight(strconv.FormatFloat(v, 'f', decimals, 64), "0")
		return strings.TrimSuffix(s, ".")
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
