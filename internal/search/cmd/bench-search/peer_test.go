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

// mlrsearchAt300 is what `make bench-search-mlr MLRSEEDS=300` measured of MLRsearch 1.2.1 on each model: its
// mean traffic time and mean |error| of the NDR and the PDR (% of line rate). The seeds are fixed and
// MLRsearch is deterministic given its trials' answers, so the figures are the same on every run; rerun
// the benchmark when a model changes.
var mlrsearchAt300 = map[string]struct{ traffic, errNDR, errPDR float64 }{
	"buffer 3M frames, 64B ~5 Mpps":          {35.0, 0.135, 0.136},
	"rare loss 1e-7/frame, 1518B ~100 kpps":  {35.2, 0.031, 0.031},
	"cold first 100 ms at half, 64B ~5 Mpps": {59.9, 0.041, 0.043},
	"noise 2%, 64B ~5 Mpps":                  {78.3, 0.151, 0.149},
	"drift -10%/h, 256B ~2 Mpps":             {37.9, 0.140, 0.133},
	"noise 1%, 1024B ~4 Gbit/s":              {69.0, 0.128, 0.140},
}

// Under the CSIT preset linerate's search is as accurate as MLRsearch on every model (mean |error| of the NDR
// and the PDR no more than the paired standard error, 0.01 % of line rate, above MLRsearch's), and spends
// no more traffic on the models where the short trials and the forwarding rate lead it: buffer, rare
// loss, drift, and the cold start (since the PDR decides at its short trials' lower bound before it
// climbs; 1.79 times MLRsearch's traffic before). On the noisy DUTs it still spends about 1.2 times
// MLRsearch's (issue 35 item 2, open): this guards today's figures against a change that costs more.
func TestCSITPresetAgainstMLRsearchsFigures(t *testing.T) {
	const seeds = 300
	ratioAtMost := map[string]float64{"cold first 100 ms at half, 64B ~5 Mpps": 1.06, "noise 2%, 64B ~5 Mpps": 1.23,
		"noise 1%, 1024B ~4 Gbit/s": 1.21}
	cappedAtMost := map[string]int{"noise 2%, 64B ~5 Mpps": 1}
	ctx := context.Background()
	for _, m := range peerModels() {
		peerFigures, ok := mlrsearchAt300[m.name]
		if !ok {
			t.Errorf("%s: no MLRsearch figures recorded", m.name)
			continue
		}
		var s side
		for seed := range seeds {
			d := m.d(m.capacity*spread(seed, seeds), seed)
			truth, err := goalTruth(d, m.size, csitFinal, 0)
			if err != nil {
				t.Fatal(err)
			}
			truthPDR, err := goalTruth(d, m.size, csitFinal, csitPDRLoss)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.addLinerate(ctx, m, d, truth, truthPDR, true); err != nil {
				t.Fatal(err)
			}
		}
		traffic, _ := mean(s.traffic, identity)
		errNDR, nNDR := mean(s.err, math.Abs)
		errPDR, nPDR := mean(s.errPDR, math.Abs)
		if nNDR != seeds || nPDR < seeds-s.capped || s.missing > 0 {
			// a PDR left undetermined is NaN and drops out of the mean: only a capped search may leave one
			t.Errorf("%s: %d NDRs and %d PDRs of %d searches, %d without a lower bound", m.name, nNDR, nPDR, seeds, s.missing)
		}
		t.Logf("%s: traffic %.1f s (%.2f of MLRsearch's), mean |err| NDR %.3f PDR %.3f, capped %d",
			m.name, traffic, traffic/peerFigures.traffic, errNDR, errPDR, s.capped)
		ratio := ratioAtMost[m.name]
		if ratio == 0 {
			ratio = 1
		}
		if traffic > ratio*peerFigures.traffic {
			t.Errorf("%s: traffic %.1f s, %.2f times MLRsearch's %.1f s (at most %.2f)", m.name, traffic, traffic/peerFigures.traffic, peerFigures.traffic, ratio)
		}
		if errNDR > peerFigures.errNDR+0.01 || errPDR > peerFigures.errPDR+0.01 {
			t.Errorf("%s: mean |err| NDR %.3f, PDR %.3f; MLRsearch's %.3f, %.3f", m.name, errNDR, errPDR, peerFigures.errNDR, peerFigures.errPDR)
		}
		if s.capped > cappedAtMost[m.name] {
			t.Errorf("%s: %d searches capped", m.name, s.capped)
		}
	}
}
