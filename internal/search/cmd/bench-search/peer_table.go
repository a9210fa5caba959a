package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"linerate.dev/linerate/internal/engine/sim"
	"linerate.dev/linerate/internal/search"
)

// csitFinal, csitSum, csitExceed and csitWidth are linerate's CSIT goal preset (plan.resolveGoal): 1 s
// trials, 21 s of them decide a load, half of that may be high-loss, done at 0.5 % of the upper bound.
const (
	csitFinal   = time.Second
	csitSum     = 21 * time.Second
	csitExceed  = 0.5
	csitWidth   = 0.005
	csitPDRLoss = 0.5 // percent: plan.CSITPDRLossPercent, the PDR the preset searches beside the NDR
	resolution  = 0.5 // percent of line rate: the plan's default, linerate's lowest rate tried
)

// csitParams is linerate's search under the CSIT preset as the runner sets it up (rfc2544.searchLanes):
// the goal's final trial is the full-length one, and the search trial (10 s by default) is clipped to
// it; the trial cap is the default for a goal of 21 trials a load, 168.
func csitParams(pdr bool) search.Params {
	p := search.Params{MaxRate: 100, Resolution: resolution, SearchTrial: 10 * time.Second, ValidationTrial: csitFinal,
		Goal: &search.Goal{FinalTrialDuration: csitFinal, DurationSum: csitSum, ExceedRatio: csitExceed, Width: csitWidth}}
	if pdr {
		v := csitPDRLoss
		p.PDRLossTolerance = &v
	}
	return p
}

// csitPeerSpec is the same goal in MLRsearch's terms, for a line rate of line frames/s. How it maps:
//   - loss_ratio, exceed_ratio, final_trial_duration, duration_sum: the same numbers.
//   - relative_width: the same definition, (upper − lower) / upper ≤ width. MLRsearch rounds it down onto its
//     logarithmic grid of loads (at most 1 % narrower). linerate floors its width at the width's share of
//     the resolution (Goal.WidthAt); MLRsearch's min_load is the resolution, so neither looks below it.
//   - initial_trial_duration: linerate's search trial, which the preset clips to the final one (1 s).
//   - min_load, max_load: the resolution and maxRate, in frames/s.
//   - preceding_targets 2, expansion_coefficient 2: MLRsearch's own (CSIT's) defaults; linerate has none.
//   - fail_fast false: a min load that is an upper bound ends with no lower bound, as linerate's "no rate
//     down to the resolution" does, rather than raising.
//   - no warm-up trial: linerate's search has none of its own (a runner's per-trial warm-up is outside
//     the trial time of both), and the sim's DUTs have no state between trials that one would change.
//   - linerate stops at 168 trials (undetermined); MLRsearch has no trial cap, only a wall-clock timeout,
//     which simulated trials never reach.
//
// The preset's width is relative, so it maps exactly; an absolute width (the RFC 2544 goal's resolution)
// has no MLRsearch counterpart, which is why the peer is compared under the CSIT preset only.
func csitPeerSpec(line float64, pdr bool) peerSpec {
	p := csitParams(pdr)
	goal := func(lossPercent float64) peerGoal {
		return peerGoal{LossRatio: lossPercent / 100, ExceedRatio: p.Goal.ExceedRatio, RelativeWidth: p.Goal.Width,
			InitialTrialDuration: min(p.SearchTrial, p.ValidationTrial).Seconds(), FinalTrialDuration: p.Goal.FinalTrialDuration.Seconds(),
			DurationSum: p.Goal.DurationSum.Seconds()}
	}
	s := peerSpec{MinLoad: p.Resolution / 100 * line, MaxLoad: p.MaxRate / 100 * line, Goals: []peerGoal{goal(p.LossTolerance)}}
	if pdr {
		s.Goals = append(s.Goals, goal(*p.PDRLossTolerance))
	}
	return s
}

// peerModels are the misleading models and the first table's DUT with 1 % noise.
func peerModels() []model {
	const noise1 = 4e9 / (8 * 1024) // 4 Gbit/s of L2 at 1024 B
	return append(models(), model{"noise 1%, 1024B ~4 Gbit/s", 1024, noise1,
		func(c float64, s int) sim.DUT { return sim.DUT{CapacityFPS: c, Noise: 0.01, Seed: uint64(s)} },
		func(c float64, _ time.Duration) float64 { return c }})
}

// goalTruth is the highest load, percent of line rate, at which the DUT's median trial of final length
// keeps its loss ratio at most lossPercent: the answer of a goal with exceed ratio 0.5 on a DUT whose trials
// vary independently. The median trial is the DUT without its noise, rare loss or drift: the median of a
// capacity that varies symmetrically is the capacity, and a loss of 1e-7 a frame leaves the median 1 s
// trial of these models clean. A search of minutes drifts the capacity by well under the goal width.
func goalTruth(d sim.DUT, size int, final time.Duration, lossPercent float64) (float64, error) {
	d.Noise, d.RareLossPerFrame, d.DriftPerHour = 0, 0, 0
	lossAt := func(rate float64) (float64, error) {
		m, err := sim.New(d).Measure(size)(context.Background(), rate, final, search.PurposeValidation)
		return m.LossPercent, err
	}
	lo, hi := 0.0, 100.0
	if l, err := lossAt(hi); err != nil || l <= lossPercent {
		return hi, err
	}
	for hi-lo > 1e-9 {
		mid := (lo + hi) / 2
		l, err := lossAt(mid)
		if err != nil {
			return 0, err
		}
		if l <= lossPercent {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, nil
}

// side is one method's searches of a model, one entry per seed.
type side struct {
	// err and errPDR are the relevant lower bound less the truth, percent of line rate.
	err, errPDR []float64
	traffic     []float64 // seconds
	trials      []int
	// capped counts searches that ran into the trial cap (linerate's, for the NDR or the PDR); missing those
	// without a lower bound for the NDR.
	capped, missing int
}

func (s *side) add(errNDR, errPDR float64, traffic time.Duration, trials int) {
	s.err, s.errPDR = append(s.err, errNDR), append(s.errPDR, errPDR)
	s.traffic, s.trials = append(s.traffic, traffic.Seconds()), append(s.trials, trials)
}

// peerRow is one model's pair of sides, the same seeds in the same order.
type peerRow struct {
	Model               string
	Linerate, MLRsearch side
}

// peerRows runs linerate's Multistage and the peer under the CSIT preset on every model, seeds seeds each.
func peerRows(p *peer, seeds int, pdr bool) ([]peerRow, error) {
	ctx := context.Background()
	var rows []peerRow
	for _, m := range peerModels() {
		row := peerRow{Model: m.name}
		line := 10e9 / (float64(m.size+20) * 8)
		spec := csitPeerSpec(line, pdr)
		for seed := range seeds {
			c := m.capacity * spread(seed, seeds)
			d := m.d(c, seed)
			truth, err := goalTruth(d, m.size, csitFinal, 0)
			if err != nil {
				return nil, err
			}
			truthPDR := math.NaN()
			if pdr {
				if truthPDR, err = goalTruth(d, m.size, csitFinal, csitPDRLoss); err != nil {
					return nil, err
				}
			}
			if err := row.Linerate.addLinerate(ctx, m, d, truth, truthPDR, pdr); err != nil {
				return nil, fmt.Errorf("%s, seed %d: linerate: %w", m.name, seed, err)
			}

			pr, err := p.search(ctx, spec, newTrialServer(d, m.size))
			if err != nil {
				return nil, fmt.Errorf("%s, seed %d: %w", m.name, seed, err)
			}
			lower := func(i int) float64 {
				if b := pr.Goals[i].Lower; b != nil {
					return 100 * *b / line
				}
				return 0
			}
			pdrErr := math.NaN()
			if pdr && pr.Goals[1].Lower != nil {
				pdrErr = lower(1) - truthPDR
			}
			row.MLRsearch.add(lower(0)-truth, pdrErr, pr.TrialTime, pr.Trials)
			if pr.Goals[0].Lower == nil {
				row.MLRsearch.missing++
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// addLinerate runs linerate's Multistage under the CSIT preset on the DUT d of the model m, and adds it.
func (s *side) addLinerate(ctx context.Context, m model, d sim.DUT, truth, truthPDR float64, pdr bool) error {
	r, err := search.Multistage(ctx, csitParams(pdr), sim.New(d).Measure(m.size))
	if err != nil {
		return err
	}
	pdrErr := math.NaN()
	if r.PDR != nil {
		pdrErr = *r.PDR - truthPDR
	}
	s.add(r.NDR-truth, pdrErr, r.TrialTime, r.Trials)
	if capped(r) {
		s.capped++
	}
	if !r.Found {
		s.missing++
	}
	return nil
}

// capped says whether linerate's search ran into its trial cap, for the NDR (undetermined) or the PDR after it
// (left out, and a note says why: stop in internal/search).
func capped(r *search.Result) bool {
	if r.Undetermined != "" {
		return true
	}
	for _, n := range r.Notes {
		if strings.HasPrefix(n, "the PDR is undetermined") {
			return true
		}
	}
	return false
}

// mean of the values that are numbers (a NaN is a PDR the search left undetermined).
func mean(xs []float64, f func(float64) float64) (float64, int) {
	sum, n := 0.0, 0
	for _, x := range xs {
		if !math.IsNaN(x) {
			sum += f(x)
			n++
		}
	}
	if n == 0 {
		return math.NaN(), 0
	}
	return sum / float64(n), n
}

func identity(x float64) float64 { return x }

// worst is the most negative error and its seed.
func worst(xs []float64) (float64, int) {
	w, at := math.Inf(1), -1
	for i, x := range xs {
		if x < w {
			w, at = x, i
		}
	}
	return w, at
}

// pairedDiff is the mean of a[i] − b[i] over the seeds where both are numbers, and its standard error.
func pairedDiff(a, b []float64, f func(float64) float64) (mean, se float64) {
	var d []float64
	for i := range a {
		if !math.IsNaN(a[i]) && !math.IsNaN(b[i]) {
			d = append(d, f(a[i])-f(b[i]))
		}
	}
	n := float64(len(d))
	if n < 2 {
		return math.NaN(), math.NaN()
	}
	for _, x := range d {
		mean += x
	}
	mean /= n
	var ss float64
	for _, x := range d {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / (n - 1) / n)
}

func meanInts(xs []int) float64 {
	s := 0
	for _, x := range xs {
		s += x
	}
	return float64(s) / float64(max(1, len(xs)))
}

// printPeer prints the paired table: per model each method's error, worst seed, trials and traffic, and
// the paired differences (linerate − MLRsearch) with their standard errors.
func printPeer(version string, rows []peerRow, seeds int, pdr bool) error {
	goals := "the NDR (loss ratio 0)"
	if pdr {
		goals = fmt.Sprintf("the NDR (loss ratio 0) and the PDR (%g %%) in one search, as the preset does", csitPDRLoss)
	}
	fmt.Printf("\nlinerate's Multistage and FD.io CSIT's MLRsearch %s (PyPI mlrsearch, unmodified) under linerate's CSIT goal preset:\n"+
		"%s; 1 s trials, 21 s decide a load, exceed ratio 0.5, relative width 0.5 %%, loads from %g %% to 100 %% of line rate.\n"+
		"Both search the same simulated DUT of the same seed, %d seeds a model (capacity spread ±5 %%). The width maps exactly\n"+
		"(both (upper − lower) / upper); MLRsearch runs its own defaults beside it (2 preceding targets, expansion 2), no\n"+
		"warm-up trial and no trial cap; linerate stops at 168 trials (capped: the NDR or the PDR left undetermined).\n"+
		"Error = relevant lower bound − truth, %% of line rate, the truth being the load where the DUT's median 1 s trial keeps\n"+
		"the loss ratio; worst = the largest error below it. Δ = linerate − MLRsearch, paired by seed, ± its standard error.\n\n",
		version, goals, resolution, seeds)
	w := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "NDR, model\tlinerate mean err\tmean |err|\tworst (seed)\ttrials\ttraffic s\tcapped\t"+
		"MLRsearch mean err\tmean |err|\tworst (seed)\ttrials\ttraffic s\tno bound\ttraffic ratio\tΔ traffic s\tΔ |err|\t")
	for _, r := range rows {
		cols := ""
		// linerate's last column counts the searches its trial cap ended, MLRsearch's (which has none) those
		// that found no lower bound
		for _, s := range []struct {
			side
			last int
		}{{r.Linerate, r.Linerate.capped}, {r.MLRsearch, r.MLRsearch.missing}} {
			me, _ := mean(s.err, identity)
			ma, _ := mean(s.err, math.Abs)
			wv, ws := worst(s.err)
			tr, _ := mean(s.traffic, identity)
			cols += fmt.Sprintf("%+.3f\t%.3f\t%+.3f (#%d)\t%.1f\t%.1f\t%d\t", me, ma, wv, ws, meanInts(s.trials), tr, s.last)
		}
		lt, _ := mean(r.Linerate.traffic, identity)
		mt, _ := mean(r.MLRsearch.traffic, identity)
		dt, dtSE := pairedDiff(r.Linerate.traffic, r.MLRsearch.traffic, identity)
		de, deSE := pairedDiff(r.Linerate.err, r.MLRsearch.err, math.Abs)
		fmt.Fprintf(w, "%s\t%s%.2f\t%+.1f ± %.1f\t%+.3f ± %.3f\t\n", r.Model, cols, lt/mt, dt, dtSE, de, deSE)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if !pdr {
		return nil
	}
	fmt.Println()
	w = tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "PDR, model\tlinerate mean err\tmean |err|\tworst (seed)\tno answer\tMLRsearch mean err\tmean |err|\tworst (seed)\tno answer\tΔ |err|\t")
	for _, r := range rows {
		cols := ""
		for _, s := range []side{r.Linerate, r.MLRsearch} {
			me, n := mean(s.errPDR, identity)
			ma, _ := mean(s.errPDR, math.Abs)
			wv, ws := worst(s.errPDR)
			cols += fmt.Sprintf("%+.3f\t%.3f\t%+.3f (#%d)\t%d\t", me, ma, wv, ws, len(s.errPDR)-n)
		}
		de, deSE := pairedDiff(r.Linerate.errPDR, r.MLRsearch.errPDR, math.Abs)
		fmt.Fprintf(w, "%s\t%s%+.3f ± %.3f\t\n", r.Model, cols, de, deSE)
	}
	return w.Flush()
}

// comparePeer starts the peer (command, split at spaces), runs the pairs and prints their table.
func comparePeer(command string, seeds int, pdr bool) error {
	if strings.TrimSpace(command) == "" {
		return errors.New("-mlrsearch: the MLRsearch peer's command is needed (make bench-search-mlr)")
	}
	p, version, err := startPeer(strings.Fields(command))
	if err != nil {
		return err
	}
	rows, err := peerRows(p, seeds, pdr)
	if cerr := p.close(); err == nil && cerr != nil {
		err = fmt.Errorf("MLRsearch peer: %w", cerr)
	}
	if err != nil {
		return err
	}
	return printPeer(version, rows, seeds, pdr)
}
