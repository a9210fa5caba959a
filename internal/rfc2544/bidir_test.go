package rfc2544_test

import (
	"testing"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/engine/sim"
)

// Both ways at once: Bidirectional searches each direction on its own (one row each, each within a
// resolution step of its truth); BidirectionalBound offers one rate both ways and one verdict, so on a
// DUT whose directions share one capacity each direction gets half of it.

func TestBidirectionalSearchesEachDirection(t *testing.T) {
	p := planFor(t, v1alpha1.TestThroughput)
	p.FrameSizes = []int{64}
	p.Traffic.Direction = v1alpha1.Bidirectional
	res, _, e, err := run(t, p, sim.DUT{CapacityFPS: 2.5e6})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Throughput) != 2 {
		t.Fatalf("want a row per direction, got %+v", res.Throughput)
	}
	truth := e.DUT.CapacityPercent(64)
	seen := map[string]bool{}
	for _, row := range res.Throughput {
		seen[row.Direction] = true
		got := pct(row.NDR.PercentOfLineRate)
		if got > truth+1e-9 || got < truth-p.Throughput.ResolutionPercent-1e-9 {
			t.Errorf("%s: NDR %.3f%%, truth %.3f%%", row.Direction, got, truth)
		}
	}
	if !seen["west->east"] || !seen["east->west"] {
		t.Errorf("directions %v", seen)
	}
	// every trial sends both ways: a direction searched alone would not load the DUT like the test asks
	for _, c := range e.Log {
		if len(c.Streams) != 2 {
			t.Fatalf("a bidirectional trial ran %d streams", len(c.Streams))
		}
	}
}

func TestBidirectionalBoundSharesTheCapacity(t *testing.T) {
	p := planFor(t, v1alpha1.TestThroughput)
	p.FrameSizes = []int{512}
	p.Traffic.Direction = v1alpha1.BidirectionalBound
	res, _, e, err := run(t, p, sim.DUT{CapacityFPS: 2e6, Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Throughput) != 2 {
		t.Fatalf("want a row per direction, got %+v", res.Throughput)
	}
	// shared: each direction forwards half the capacity when both are offered the same rate
	truth := e.DUT.CapacityPercent(512) / 2
	var rates []string
	for _, row := range res.Throughput {
		got := pct(row.NDR.PercentOfLineRate)
		rates = append(rates, row.NDR.PercentOfLineRate)
		if got > truth+1e-9 || got < truth-p.Throughput.ResolutionPercent-1e-9 {
			t.Errorf("%s: NDR %.3f%%, truth %.3f%% per direction", row.Direction, got, truth)
		}
	}
	if rates[0] != rates[1] {
		t.Errorf("a bound search has one rate for both directions: %v", rates)
	}
}
