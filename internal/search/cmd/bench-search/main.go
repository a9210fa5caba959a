// Command bench-search compares plain RFC 2544 binary search with linerate's Multistage search on the
// same simulated DUTs at equal resolution: trials and traffic time to the validated NDR (and NDR+PDR).
//
//	go run ./internal/search/cmd/bench-search [-resolution 0.5] [-search 10s] [-validation 60s] [-seeds 5]
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
	seeds := flag.Int("seeds", 5, "noise seeds per noisy DUT")
	pdr := flag.Float64("pdr", 0.1, "PDR loss tolerance for the NDR+PDR rows, percent")
	flag.Parse()

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
	misleading(*res, *short, *long, *seeds)
}

// model is a DUT whose truth at the full-length trial is known in closed form.
type model struct {
	name  string
	size  int
	d     func(seed int) sim.DUT
	truth func(full time.Duration) float64 // frames/s
}

// misleading runs both searches on the DUT models where short trials mislead: a buffer that absorbs them, a
// rare random loss that they are too short to meet, a cold start that weighs more in them, drift and noise;
// and prints each method's traffic time and its error against the truth, side by side.
func misleading(res float64, short, long time.Duration, seeds int) {
	const line64, line1518 = 10e9 / (84 * 8), 10e9 / (1538 * 8)
	models := []model{
		{"buffer 3M frames, 64B 5 Mpps", 64, func(int) sim.DUT { return sim.DUT{CapacityFPS: 5e6, BufferFrames: 3e6} },
			func(full time.Duration) float64 { return 5e6 + 3e6/full.Seconds() }},
		// a full-length trial is clean half the time at ln 2 ÷ (duration × loss per frame), if below capacity
		{"rare loss 1e-7/frame, 1518B 100 kpps", 1518, func(s int) sim.DUT {
			return sim.DUT{CapacityFPS: 1e5, RareLossPerFrame: 1e-7, Seed: uint64(s)}
		}, func(full time.Duration) float64 { return min(1e5, math.Ln2/(full.Seconds()*1e-7)) }},
		{"cold first 100 ms at half, 64B 5 Mpps", 64, func(int) sim.DUT { return sim.DUT{CapacityFPS: 5e6, ColdFraction: 0.5} },
			func(time.Duration) float64 { return 2.5e6 }},
		{"noise 2%, 64B 5 Mpps", 64, func(s int) sim.DUT { return sim.DUT{CapacityFPS: 5e6, Noise: 0.02, Seed: uint64(s)} },
			func(time.Duration) float64 { return 5e6 }},
		{"drift -10%/h, 256B 2 Mpps", 256, func(s int) sim.DUT { return sim.DUT{CapacityFPS: 2e6, DriftPerHour: -0.1, Seed: uint64(s)} },
			func(time.Duration) float64 { return 2e6 }},
	}
	fmt.Printf("\nDUT models where short trials mislead (loss tolerance 0, %d seeds each; error = NDR − truth, %% of line rate):\n\n", seeds)
	w := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "model\ttruth %\tBinary s\tmean err\tworst err\tMultistage s\tmean err\tworst err\ttime ratio\t")
	for _, m := range models {
		line := line64
		if m.size == 1518 {
			line = line1518
		} else if m.size != 64 {
			line = 10e9 / (float64(m.size+20) * 8)
		}
		truth := 100 * m.truth(long) / line
		var t [2]time.Duration
		var sumErr, worst [2]float64
		for seed := range seeds {
			p := search.Params{MaxRate: 100, Resolution: res, SearchTrial: short, ValidationTrial: long}
			for i, run := range []func(context.Context, search.Params, search.Measure) (*search.Result, error){search.Binary, search.Multistage} {
				r, err := run(context.Background(), p, sim.New(m.d(seed)).Measure(m.size))
				if err != nil {
					fmt.Fprintln(os.Stderr, m.name, err)
					os.Exit(1)
				}
				e := r.NDR - truth
				t[i] += r.TrialTime
				sumErr[i] += e
				if math.Abs(e) > math.Abs(worst[i]) {
					worst[i] = e
				}
			}
		}
		fmt.Fprintf(w, "%s\t%.2f\t%.0f\t%+.2f\t%+.2f\t%.0f\t%+.2f\t%+.2f\t%.2f\t\n", m.name, truth,
			t[0].Seconds()/float64(seeds), sumErr[0]/float64(seeds), worst[0],
			t[1].Seconds()/float64(seeds), sumErr[1]/float64(seeds), worst[1], t[1].Seconds()/t[0].Seconds())
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "bench-search:", err)
		os.Exit(1)
	}
}
