// Command bench-search compares plain RFC 2544 binary search with linerate's Multistage search on the
// same simulated DUTs at equal resolution: trials and traffic time to the validated NDR (and NDR+PDR).
//
//	go run ./internal/search/cmd/bench-search [-resolution 0.5] [-search 10s] [-validation 60s] [-seeds 5] [-model-seeds 300]
//
// With -mlrsearch it also compares linerate's Multistage with FD.io CSIT's MLRsearch under the CSIT goal
// preset, paired by seed (peer.go, peer_table.go; make bench-search-mlr).
//
// The DUTs are simulated (internal/engine/sim); the figures measure the algorithms, not a device.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"text/tabwriter"
	"time"

	"linerate.dev/linerate/internal/engine/sim"
	"linerate.dev/linerate/internal/search"
)

type dut struct {
	name string
	size int
	d    sim.DUT
}

func main() {
	res := flag.Float64("resolution", 0.5, "search resolution, percent of line rate")
	short := flag.Duration("search", 10*time.Second, "Multistage search trial")
	long := flag.Duration("validation", 60*time.Second, "full-length trial (validation; every Binary trial)")
	overhead := flag.Duration("overhead", 8*time.Second, "per-trial overhead for the wall-clock column (warm-up 1 s + drain 2 s + DUT rest 5 s)")
	seeds := flag.Int("seeds", 5, "noise seeds per noisy DUT in the first table")
	modelSeeds := flag.Int("model-seeds", 300, "seeds per DUT model where short trials mislead (a mean error needs hundreds)")
	pdr := flag.Float64("pdr", 0.1, "PDR loss tolerance for the NDR+PDR rows, percent")
	mlr := flag.String("mlrsearch", "", `command of the MLRsearch peer, e.g. "bin/mlrsearch/bin/python hack/bench/mlrsearch_peer.py": adds its paired table`)
	mlrSeeds := flag.Int("mlrsearch-seeds", 2000, "seeds per DUT model in the MLRsearch table (~3 min at 2000 on 2 shared cores)")
	mlrPDR := flag.Bool("mlrsearch-pdr", true, "search the CSIT preset's PDR (0.5 %) beside the NDR in the MLRsearch table, as the preset does")
	mlrOnly := flag.Bool("mlrsearch-only", false, "print the MLRsearch table alone")
	flag.Parse()
	if *mlrOnly {
		if err := comparePeer(*mlr, *mlrSeeds, *mlrPDR); err != nil {
			fmt.Fprintln(os.Stderr, "bench-search:", err)
			os.Exit(1)
		}
		return
	}

	duts := []dut{
		{"64B, 1.0 Mpps", 64, sim.DUT{CapacityFPS: 1e6}},
		{"64B, 3.3 Mpps", 64, sim.DUT{CapacityFPS: 3.3e6}},
		{"64B, 7.7 Mpps", 64, sim.DUT{CapacityFPS: 7.7e6}},
		{"64B, 14.5 Mpps", 64, sim.DUT{CapacityFPS: 14.5e6}},
		{"512B, 3 Gbit/s", 512, sim.DUT{CapacityL2Bps: 3e9}},
		{"1518B, 6.7 Gbit/s", 1518, sim.DUT{CapacityL2Bps: 6.7e9}},
		{"1518B, line rate", 1518, sim.DUT{}},
	}
	var noisy []dut
	for s := range *seeds {
		noisy = append(noisy,
			dut{fmt.Sprintf("1024B, 4 Gbit/s, noise 1%% #%d", s), 1024, sim.DUT{CapacityL2Bps: 4e9, Noise: 0.01, Seed: uint64(s)}},
			dut{fmt.Sprintf("64B, 5 Mpps, noise 2%% #%d", s), 64, sim.DUT{CapacityFPS: 5e6, Noise: 0.02, Seed: uint64(s)}},
			dut{fmt.Sprintf("256B, 2 Mpps, drift -10%%/h #%d", s), 256, sim.DUT{CapacityFPS: 2e6, DriftPerHour: -0.1, Seed: uint64(s)}})
	}
	duts = append(duts, noisy...)

	fmt.Printf("Throughput search on simulated DUTs: resolution %g%% of line rate, Binary trials %s, Multistage %s search + %s validation\n\n",
		*res, *long, *short, *long)
	w := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "DUT\ttruth %\tBinary NDR %\ttrials\ttraffic s\tMultistage NDR %\ttrials\ttraffic s\tratio\t")
	var sum [2]struct {
		trials int
		t      time.Duration
	}
	var sumPDR [2]struct {
		trials int
		t      time.Duration
	}
	for _, d := range duts {
		p := search.Params{MaxRate: 100, Resolution: *res, SearchTrial: *short, ValidationTrial: *long}
		var r [2]*search.Result
		for i, run := range []func(context.Context, search.Params, search.Measure) (*search.Result, error){search.Binary, search.Multistage} {
			e := sim.New(d.d)
			out, err := run(context.Background(), p, e.Measure(d.size))
			if err != nil {
				fmt.Fprintln(os.Stderr, d.name, err)
				os.Exit(1)
			}
			r[i] = out
			sum[i].trials += out.Trials
			sum[i].t += out.TrialTime
			pp := p
			pp.PDRLossTolerance = pdr
			e = sim.New(d.d)
			out, err = run(context.Background(), pp, e.Measure(d.size))
			if err != nil {
				fmt.Fprintln(os.Stderr, d.name, err)
				os.Exit(1)
			}
			sumPDR[i].trials += out.Trials
			sumPDR[i].t += out.TrialTime
		}
		truth := sim.New(d.d).DUT.CapacityPercent(float64(d.size))
		fmt.Fprintf(w, "%s\t%.2f\t%.2f\t%d\t%.0f\t%.2f\t%d\t%.0f\t%.2f\t\n", d.name, truth,
			r[0].NDR, r[0].Trials, r[0].TrialTime.Seconds(), r[1].NDR, r[1].Trials, r[1].TrialTime.Seconds(),
			r[1].TrialTime.Seconds()/r[0].TrialTime.Seconds())
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "bench-search:", err)
		os.Exit(1)
	}
	n := float64(len(duts))
	fmt.Printf("\nNDR only, %d DUTs:\n", len(duts))
	fmt.Printf("  Binary:     %.1f trials, %.0f s traffic per search (%.0f s with %s overhead per trial)\n",
		float64(sum[0].trials)/n, sum[0].t.Seconds()/n, (sum[0].t.Seconds()+float64(sum[0].trials)*overhead.Seconds())/n, *overhead)
	fmt.Printf("  Multistage: %.1f trials, %.0f s traffic per search (%.0f s with overhead)\n",
		float64(sum[1].trials)/n, sum[1].t.Seconds()/n, (sum[1].t.Seconds()+float64(sum[1].trials)*overhead.Seconds())/n)
	fmt.Printf("  ratio Multistage/Binary: traffic time %.2f, trials %.2f, wall clock %.2f (target <= 0.5)\n",
		sum[1].t.Seconds()/sum[0].t.Seconds(), float64(sum[1].trials)/float64(sum[0].trials),
		(sum[1].t.Seconds()+float64(sum[1].trials)*overhead.Seconds())/(sum[0].t.Seconds()+float64(sum[0].trials)*overhead.Seconds()))
	fmt.Printf("NDR + PDR (%g%%), Binary = two plain searches:\n", *pdr)
	fmt.Printf("  Binary %.1f trials, %.0f s; Multistage %.1f trials, %.0f s; ratio traffic time %.2f\n",
		float64(sumPDR[0].trials)/n, sumPDR[0].t.Seconds()/n, float64(sumPDR[1].trials)/n, sumPDR[1].t.Seconds()/n,
		sumPDR[1].t.Seconds()/sumPDR[0].t.Seconds())
	if err := misleading(*res, *short, *long, *modelSeeds); err != nil {
		fmt.Fprintln(os.Stderr, "bench-search:", err)
		os.Exit(1)
	}
	if *mlr != "" {
		if err := comparePeer(*mlr, *mlrSeeds, *mlrPDR); err != nil {
			fmt.Fprintln(os.Stderr, "bench-search:", err)
			os.Exit(1)
		}
	}
}

// model is a DUT whose truth at the full-length trial is known in closed form, at a capacity the seed
// varies: a fixed capacity would measure how close one rate happens to lie to a method's grid of trial
// rates (plain bisection from 100 % lands within 0.01 % of 33.60 % by chance), not the method.
type model struct {
	name     string
	size     int
	capacity float64 // frames/s, before the seed's spread
	d        func(capacity float64, seed int) sim.DUT
	truth    func(capacity float64, full time.Duration) float64 // frames/s
}

// spread is the seed's capacity factor: spread evenly over ±5 % in an order no grid follows.
func spread(seed, seeds int) float64 {
	const golden = 0.6180339887498949
	_, frac := math.Modf(float64(seed) * golden)
	if seeds == 1 {
		frac = 0.5
	}
	return 1 + 0.1*(frac-0.5)
}

// models are the DUT models where short trials mislead: a buffer that absorbs them, a rare random loss that
// they are too short to meet, a cold start that weighs more in them, noise and drift.
func models() []model {
	return []model{
		{"buffer 3M frames, 64B ~5 Mpps", 64, 5e6,
			func(c float64, _ int) sim.DUT { return sim.DUT{CapacityFPS: c, BufferFrames: 3e6} },
			func(c float64, full time.Duration) float64 { return c + 3e6/full.Seconds() }},
		// a full-length trial is clean half the time at ln 2 ÷ (duration × loss per frame), if below capacity
		{"rare loss 1e-7/frame, 1518B ~100 kpps", 1518, 1e5,
			func(c float64, s int) sim.DUT {
				return sim.DUT{CapacityFPS: c, RareLossPerFrame: 1e-7, Seed: uint64(s)}
			},
			func(c float64, full time.Duration) float64 { return min(c, math.Ln2/(full.Seconds()*1e-7)) }},
		{"cold first 100 ms at half, 64B ~5 Mpps", 64, 5e6,
			func(c float64, _ int) sim.DUT { return sim.DUT{CapacityFPS: c, ColdFraction: 0.5} },
			func(c float64, _ time.Duration) float64 { return c / 2 }},
		{"noise 2%, 64B ~5 Mpps", 64, 5e6,
			func(c float64, s int) sim.DUT { return sim.DUT{CapacityFPS: c, Noise: 0.02, Seed: uint64(s)} },
			func(c float64, _ time.Duration) float64 { return c }},
		{"drift -10%/h, 256B ~2 Mpps", 256, 2e6,
			func(c float64, s int) sim.DUT { return sim.DUT{CapacityFPS: c, DriftPerHour: -0.1, Seed: uint64(s)} },
			func(c float64, _ time.Duration) float64 { return c }},
	}
}

// methodStats is how one search method did on one model over the seeds; errors are NDR − truth in percent
// of line rate.
type methodStats struct {
	// Traffic and Trials are the means per search.
	Traffic time.Duration
	Trials  float64
	// MeanErr is the mean error, MeanAbsErr the mean of its size.
	MeanErr, MeanAbsErr float64
	// Worst is the largest error below the truth (0 when none), Above the largest above it (0 when none).
	Worst, Above float64
	// Undetermined counts the searches that ended undetermined.
	Undetermined int
}

// modelRow is one model's line of the table: Binary's figures and Multistage's.
type modelRow struct {
	Model              string
	Binary, Multistage methodStats
}

// misleadingRows runs both searches on every model for seeds seeds each.
func misleadingRows(res float64, short, long time.Duration, seeds int) ([]modelRow, error) {
	var rows []modelRow
	for _, m := range models() {
		line := 10e9 / (float64(m.size+20) * 8)
		var stats [2]methodStats
		var traffic [2]time.Duration
		var trials [2]int
		for seed := range seeds {
			c := m.capacity * spread(seed, seeds)
			truth := 100 * m.truth(c, long) / line
			p := search.Params{MaxRate: 100, Resolution: res, SearchTrial: short, ValidationTrial: long}
			for i, run := range []func(context.Context, search.Params, search.Measure) (*search.Result, error){search.Binary, search.Multistage} {
				r, err := run(context.Background(), p, sim.New(m.d(c, seed)).Measure(m.size))
				if err != nil {
					return nil, fmt.Errorf("%s, seed %d: %w", m.name, seed, err)
				}
				e := r.NDR - truth
				st := &stats[i]
				traffic[i] += r.TrialTime
				trials[i] += r.Trials
				st.MeanErr += e
				st.MeanAbsErr += math.Abs(e)
				st.Worst, st.Above = min(st.Worst, e), max(st.Above, e)
				if r.Undetermined != "" {
					st.Undetermined++
				}
			}
		}
		n := float64(seeds)
		for i := range stats {
			stats[i].Traffic = traffic[i] / time.Duration(seeds)
			stats[i].Trials = float64(trials[i]) / n
			stats[i].MeanErr /= n
			stats[i].MeanAbsErr /= n
		}
		rows = append(rows, modelRow{Model: m.name, Binary: stats[0], Multistage: stats[1]})
	}
	return rows, nil
}

// misleading prints each method's traffic time, trials and error against the truth on the models where
// short trials mislead, side by side, and names the models where Multistage's worst seed is below Binary's.
func misleading(res float64, short, long time.Duration, seeds int) error {
	rows, err := misleadingRows(res, short, long, seeds)
	if err != nil {
		return err
	}
	fmt.Printf("\nDUT models where short trials mislead (loss tolerance 0, %d seeds each, capacity spread ±5 %% over the seeds;\n"+
		"error = NDR − truth, %% of line rate; mean |err| is the mean of its size, worst the largest below the\n"+
		"truth, above the largest above it; trials and traffic s are means per search; undet.: searches that ended undetermined):\n\n", seeds)
	w := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "model\tBinary trials\ttraffic s\tmean err\tmean |err|\tworst\tabove\tundet.\tMultistage trials\ttraffic s\tmean err\tmean |err|\tworst\tabove\tundet.\ttime ratio\t")
	for _, r := range rows {
		b, m := r.Binary, r.Multistage
		fmt.Fprintf(w, "%s\t%.1f\t%.0f\t%+.2f\t%.2f\t%+.2f\t%+.2f\t%d\t%.1f\t%.0f\t%+.2f\t%.2f\t%+.2f\t%+.2f\t%d\t%.2f\t\n", r.Model,
			b.Trials, b.Traffic.Seconds(), b.MeanErr, b.MeanAbsErr, b.Worst, b.Above, b.Undetermined,
			m.Trials, m.Traffic.Seconds(), m.MeanErr, m.MeanAbsErr, m.Worst, m.Above, m.Undetermined, m.Traffic.Seconds()/b.Traffic.Seconds())
	}
	if err := w.Flush(); err != nil {
		return err
	}
	// the means favour Multistage; its worst seed need not, and a reader of the table should not have to
	// find that out alone
	fmt.Println()
	for _, r := range rows {
		if r.Multistage.Worst < r.Binary.Worst {
			fmt.Printf("  %s: Multistage's worst seed is lower than Binary's (%+.2f against %+.2f %% of line rate)\n",
				r.Model, r.Multistage.Worst, r.Binary.Worst)
		}
	}
	return nil
}
