package main

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"linerate.dev/linerate/internal/engine/sim"
	"linerate.dev/linerate/internal/search"
)

// The peer's trials are linerate's: on every model, the same seed and the same sequence of trials, the trial
// server and sim's Measure (what linerate's search measures with) lose the same frames in the same time,
// noise, rare loss and drift included.
func TestTrialServerAnswersAsSim(t *testing.T) {
	ctx := context.Background()
	for _, m := range peerModels() {
		t.Run(m.name, func(t *testing.T) {
			d := m.d(m.capacity, 7)
			line := 10e9 / (float64(m.size+20) * 8)
			truth := 100 * m.capacity / line
			server, measure := newTrialServer(d, m.size), sim.New(d).Measure(m.size)
			lost := 0
			for i, pct := range []float64{100, truth * 1.2, truth * 0.9, truth, truth * 1.001, truth * 0.999, truth * 0.5, truth * 1.3} {
				dur := []time.Duration{time.Second, 500 * time.Millisecond, 60 * time.Second}[i%3]
				want, err := measure(ctx, pct, dur, search.PurposeSearch)
				if err != nil {
					t.Fatal(err)
				}
				got, err := server.trial(ctx, peerTrial{Duration: dur.Seconds(), Load: pct / 100 * line})
				if err != nil {
					t.Fatal(err)
				}
				gotLoss := float64(got.Offered-got.Forwarded) * 100 / float64(got.Offered)
				if gotLoss != want.LossPercent || time.Duration(math.Round(got.Duration*1e9)) != want.Duration {
					t.Errorf("trial %d at %.4f%% for %s: server lost %.6f%% in %gs, sim's Measure %.6f%% in %s",
						i, pct, dur, gotLoss, got.Duration, want.LossPercent, want.Duration)
				}
				if got.Intended != got.Offered {
					t.Errorf("trial %d: %d frames intended, %d offered: the simulated tester is never short", i, got.Intended, got.Offered)
				}
				if gotLoss > 0 {
					lost++
				}
			}
			if lost == 0 {
				t.Errorf("no trial lost frames: the comparison saw no loss to compare")
			}
		})
	}
}

// The truth the table measures errors against is, for the NDR, each model's own closed form at 1 s trials
// (the load where the loss rounds to a frame lies a few frames/s above it).
func TestGoalTruthIsTheModelsTruthAtOneSecond(t *testing.T) {
	for _, m := range peerModels() {
		c := m.capacity * spread(3, 10)
		line := 10e9 / (float64(m.size+20) * 8)
		got, err := goalTruth(m.d(c, 3), m.size, csitFinal, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := 100 * m.truth(c, csitFinal) / line
		if math.Abs(got-want) > 1e-4 {
			t.Errorf("%s: truth %.6f%% of line rate, the closed form %.6f%%", m.name, got, want)
		}
		pdr, err := goalTruth(m.d(c, 3), m.size, csitFinal, csitPDRLoss)
		if err != nil {
			t.Fatal(err)
		}
		if pdr < got {
			t.Errorf("%s: the PDR's truth %.6f%% is below the NDR's %.6f%%", m.name, pdr, got)
		}
	}
}

// The real peer, where its venv is installed (bash hack/install-mlrsearch.sh; make test does not install it):
// on a steady DUT MLRsearch's NDR and PDR bounds hold the truth at its goal width, from trials the pipe
// carried one for one.
func TestMLRsearchPeerBracketsASteadyDUT(t *testing.T) {
	root, err := filepath.Abs("../../../..")
	if err != nil {
		t.Fatal(err)
	}
	python := filepath.Join(root, "bin/mlrsearch/bin/python")
	if _, err := os.Stat(python); err != nil {
		t.Skipf("no MLRsearch venv at %s (bash hack/install-mlrsearch.sh)", python)
	}
	p, version, err := startPeer([]string{python, filepath.Join(root, "hack/bench/mlrsearch_peer.py")})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := p.close(); err != nil {
			t.Error(err)
		}
	}()
	if version != "1.2.1" {
		t.Errorf("MLRsearch %q, want 1.2.1", version)
	}
	const size = 64
	line := 10e9 / (float64(size+20) * 8)
	for _, capacity := range []float64{2e6, 9e6} {
		d := sim.DUT{CapacityFPS: capacity}
		r, err := p.search(context.Background(), csitPeerSpec(line, true), newTrialServer(d, size))
		if err != nil {
			t.Fatal(err)
		}
		if r.Trials < 2 || r.TrialTime < time.Duration(r.Trials)*time.Second {
			t.Errorf("capacity %g: %d trials in %s", capacity, r.Trials, r.TrialTime)
		}
		for i, lossPercent := range []float64{0, csitPDRLoss} {
			truth, err := goalTruth(d, size, csitFinal, lossPercent)
			if err != nil {
				t.Fatal(err)
			}
			g := r.Goals[i]
			if g.Lower == nil || g.Upper == nil {
				t.Fatalf("capacity %g, loss %g%%: bounds %+v", capacity, lossPercent, g)
			}
			lo, hi := 100**g.Lower/line, 100**g.Upper/line
			if lo > truth || hi < truth || (hi-lo)/hi > csitWidth {
				t.Errorf("capacity %g, loss %g%%: [%.4f, %.4f]%% of line rate around a truth of %.4f%%, width %.5f",
					capacity, lossPercent, lo, hi, truth, (hi-lo)/hi)
			}
		}
	}
}
