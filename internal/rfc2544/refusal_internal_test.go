package rfc2544

import (
	"testing"

	"linerate.dev/linerate/internal/engine"
)

// An IMIX is refused as fragmented only when frames of its smallest size crossed (in fragments, since none
// crossed whole): a trial that lost every frame of the sizes that fit says nothing of them.
func TestSmallestCrossed(t *testing.T) {
	cycle := []int{1518, 64, 1518}
	for _, c := range []struct {
		name    string
		classes []engine.ClassResult
		want    bool
	}{
		{"the smallest arrived", []engine.ClassResult{{Size: 1518, TxFrames: 20, RxFrames: 20}, {Size: 64, TxFrames: 10, RxFrames: 3}}, true},
		{"every frame of the smallest lost", []engine.ClassResult{{Size: 1518, TxFrames: 20, RxFrames: 20}, {Size: 64, TxFrames: 10}}, false},
		{"no class for it", []engine.ClassResult{{Size: 1518, TxFrames: 20, RxFrames: 20}}, false},
		{"no classes", nil, false},
	} {
		if got := smallestCrossed(&engine.StreamResult{Classes: c.classes}, cycle); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	if smallestCrossed(nil, cycle) {
		t.Error("no stream: nothing crossed")
	}
}
