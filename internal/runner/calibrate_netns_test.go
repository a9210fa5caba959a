package runner_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/calibration"
	"linerate.dev/linerate/internal/engine"
	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/testenv"
)

// Calibration against truth: a veth pair is a DUT faster than any tester (a wire), so what the tester
// finds through it is its own ceiling, and a run through the same wire must not be reported as a DUT's
// NDR; a token bucket far below that ceiling is the DUT's, and stays so.

// calibrate runs `linerate calibrate` in the network namespace ns and reads the file it wrote.
func calibrate(t *testing.T, eng, ns, testYAML string) (*calibration.Calibration, string) {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "linerate")
	sh(t, "go", "build", "-o", bin, "linerate.dev/linerate/cmd/linerate")
	f, out := filepath.Join(dir, "test.yaml"), filepath.Join(dir, "calibration.json")
	if err := os.WriteFile(f, []byte(testYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ip", "netns", "exec", ns, bin, "calibrate", "-f", f, "--engine", eng, "--out", out, "--repetitions", "1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if _, err := cmd.Output(); err != nil {
		t.Fatalf("linerate calibrate: %v\n%s", err, stderr.String())
	}
	c, err := calibration.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	return c, out
}

// skipIfTheTesterSpoiledItsCalibration skips where the host was so loaded that the tester spoiled every
// calibration trial down to nothing: the ceiling is unknown, and the calibration says so (a run then gets
// no ceiling from it); TestNDROfATokenBucketIsItsRate fails where no trial of a run stays clean.
func skipIfTheTesterSpoiledItsCalibration(t *testing.T, c *calibration.Calibration) {
	t.Helper()
	said := func(s string) bool {
		return slices.ContainsFunc(c.Notes, func(n string) bool { return strings.Contains(n, s) })
	}
	if len(c.Ceilings) == 1 && c.Ceilings[0].Unknown != "" && said("the tester spoiled every trial at") && said("the tester was the limit from") {
		note, ok := spoiledForLoad(c)
		if !ok {
			t.Fatalf("the tester spoiled every calibration trial, for a fault no load explains (or none named): %q", c.Notes)
		}
		testenv.SkipForLoad(t, "the tester spoiled every calibration trial on this loaded host: ceiling %+v; %s", c.Ceilings[0], note)
	}
}

// spoiledForLoad is the calibration's note on the trials the tester spoiled, when the first fault it names
// is one load explains (engine.ExplainedByLoad). linerate calibrate keeps no trial records: that note is
// the evidence.
func spoiledForLoad(c *calibration.Calibration) (string, bool) {
	i := slices.IndexFunc(c.Notes, func(n string) bool { return strings.Contains(n, "their records list why (testerFaults). The first: ") })
	if i < 0 || !engine.ExplainedByLoad(c.Notes[i][strings.Index(c.Notes[i], "The first: "):]) {
		return "", false
	}
	return c.Notes[i], true
}

// floorSpoiledByTheTester says whether the calibration's one latency floor was not measured because the
// tester spoiled every repetition, each for a fault a loaded host causes (engine.ExplainedByLoad). A floor
// missing for any other reason (a wire that lost frames, an aborted trial, none asked for) is a defect the
// caller reports.
func floorSpoiledByTheTester(c *calibration.Calibration) bool {
	if len(c.Floors) != 0 || len(c.FloorsNotMeasured) != 1 {
		return false
	}
	for _, why := range c.FloorsNotMeasured[0].Reasons {
		fault, spoiled := strings.CutPrefix(why, "the tester spoiled it: ")
		if !spoiled || !engine.ExplainedByLoad(fault) {
			return false
		}
	}
	return true
}

func TestCalibrationIsTheTestersCeilingAndAWireIsNotADUT(t *testing.T) {
	eng := need(t)
	ns := wire(t, "cw")
	// the user's test names a routed DUT; calibrate joins the ports and forgets the gateways
	sizes := []int32{64}
	c, file := calibrate(t, eng, ns, asYAML(t, routedTest("cal", throughput, sizes, "0.5", "100")))
	skipIfTheTesterSpoiledItsCalibration(t, c)
	if len(c.Ceilings) != 1 || c.Ceilings[0].Unknown != "" {
		t.Fatalf("ceilings %+v, notes %q", c.Ceilings, c.Notes)
	}
	ceiling := c.Ceilings[0]
	if ceiling.FramesPerSecond <= 0 || len(c.Ports) != 2 || c.Ports[0].Driver == "" || c.Incomplete != "" {
		t.Fatalf("calibration %+v", c)
	}
	// the floor is through no DUT: the tester's own path, above zero and below the trial's drain
	floorSpoiled := floorSpoiledByTheTester(c)
	if !floorSpoiled && (len(c.Floors) != 1 || c.Floors[0].MinNs <= 0 || c.Floors[0].MinNs > c.Floors[0].P50Ns || c.Floors[0].P50Ns > 300e6) {
		t.Errorf("latency floors %+v, not measured %+v", c.Floors, c.FloorsNotMeasured)
	}
	if ceiling.AtLineRate {
		if floorSpoiled {
			testenv.SkipForLoad(t, "the tester spoiled every repetition of its latency floor on this loaded host: %+v", c.FloorsNotMeasured)
		}
		t.Skipf("this tester sends 64 B frames at 1 Gbit/s line rate through af_packet: no ceiling below it to test")
	}

	// The same wire, now as the "DUT" of a run: its NDR is the tester's ceiling again, within the
	// tester's own spread, and the run must say so.
	loop := loopTest(func(tt *v1alpha1.TrafficTest) {
		tt.Spec.Tests, tt.Spec.FrameSizes = throughput, sizes
		tt.Spec.Throughput.MaxRate = "100"
		tt.Spec.Throughput.Resolution = "0.5"
	})
	o, stderr, err := execCLI(t, eng, ns, loop, "", "--calibration", file)
	defer logTrialsIfFailed(t, o)
	if err != nil || len(o.Results.Throughput) != 1 {
		t.Fatalf("run: %v %q\n%s", err, o.Error, stderr)
	}
	row := o.Results.Throughput[0]
	if row.NDR.FramesPerSecond == 0 && row.TesterLimited {
		// the host was so loaded that the tester spoiled the run's trials down to nothing: no NDR, so no
		// margin to it; the row still must not be the DUT's, with the spoiled trials to show for it, and a
		// wire loses nothing in a trial the tester kept
		_ = lowerBounds(t, o)
		for _, tr := range o.Trials {
			if !tr.TesterLimited && tr.Lost != 0 {
				t.Errorf("trial %d: the wire lost %d frames in a trial the tester did not spoil", tr.Seq, tr.Lost)
			}
		}
		if !t.Failed() {
			testenv.SkipForLoad(t, "the tester spoiled the run's trials through the wire down to no NDR on this loaded host (ceiling %d frames/s): row %+v", ceiling.FramesPerSecond, row)
		}
		return
	}
	margin, err := strconv.ParseFloat(row.CeilingMarginPercent, 64)
	if err != nil {
		t.Fatalf("row %+v has no margin to the ceiling of %d frames/s", row, ceiling.FramesPerSecond)
	}
	t.Logf("ceiling %d frames/s, through the wire %d frames/s: margin %.1f%%", ceiling.FramesPerSecond, row.NDR.FramesPerSecond, margin)
	if !row.TesterLimited {
		t.Errorf("a wire's NDR of %d frames/s, %.1f%% below the tester's ceiling of %d, was reported as a DUT's", row.NDR.FramesPerSecond, margin, ceiling.FramesPerSecond)
	}
	if floorSpoiled && !t.Failed() {
		testenv.SkipForLoad(t, "all else checked; the tester spoiled every repetition of its latency floor on this loaded host: %+v", c.FloorsNotMeasured)
	}
}

func TestCalibrationLeavesADUTSlowerThanTheTesterItsOwn(t *testing.T) {
	eng := need(t)
	ns := wire(t, "cs")
	sizes := []int32{64}
	c, file := calibrate(t, eng, ns, asYAML(t, routedTest("cal", throughput, sizes, "0.5", "100")))
	skipIfTheTesterSpoiledItsCalibration(t, c)
	if len(c.Ceilings) != 1 || c.Ceilings[0].Unknown != "" || (!c.Ceilings[0].AtLineRate && c.Ceilings[0].FramesPerSecond <= 0) {
		t.Fatalf("ceilings %+v, notes %q", c.Ceilings, c.Notes)
	}
	// The truth needs a ceiling well above the bucket's 20.8 kframes/s. A ceiling below twice that is
	// the host's load only with the calibration's own evidence: trials it spoiled, the first for a fault
	// load explains; without it, a ceiling that low is a defect.
	if cl := c.Ceilings[0]; !cl.AtLineRate && cl.FramesPerSecond < 2*20833 {
		note, ok := spoiledForLoad(c)
		if !ok {
			t.Fatalf("a ceiling of %d frames/s, below twice the token bucket, with no trial the tester spoiled for a fault load explains: %+v; notes %q", cl.FramesPerSecond, cl, c.Notes)
		}
		testenv.SkipForLoad(t, "the tester calibrated a ceiling of %d frames/s on this loaded host, not clearly above the 20.8 kframes/s token bucket; %s", cl.FramesPerSecond, note)
	}
	tns, rns := router(t, "cs")
	// 10 Mbit/s at 64 B: tbf counts 60 B per frame, 20.8 kframes/s, 1.4 % of line rate (through a kernel
	// router the tester's own sending costs more than through a wire: the bucket stays well below that)
	sh(t, "ip", "netns", "exec", rns, "tc", "qdisc", "add", "dev", "r1", "root", "tbf", "rate", "10mbit", "burst", "16384", "limit", "16384")
	o, stderr, err := execCLI(t, eng, tns, routedTest("tbf", throughput, sizes, "0.05", "3"), "", "--calibration", file)
	defer logTrialsIfFailed(t, o)
	if err != nil || len(o.Results.Throughput) != 1 {
		t.Fatalf("run: %v %q\n%s", err, o.Error, stderr)
	}
	row := o.Results.Throughput[0]
	if c.Ceilings[0].AtLineRate {
		// no ceiling to hand the row to; only the tester's own checks may (a preemption on a loaded host),
		// which lowerBounds holds against the trials it spoiled
		if row.CeilingMarginPercent != "" {
			t.Errorf("a tester without a ceiling below line rate limited the row: %+v", row)
		}
		skipForLowerBounds(t, lowerBounds(t, o), o)
		return
	}
	want := 100 * (1 - float64(row.NDR.FramesPerSecond)/float64(c.Ceilings[0].FramesPerSecond))
	if got, err := strconv.ParseFloat(row.CeilingMarginPercent, 64); err != nil || got < want-0.1 || got > want+0.1 {
		t.Errorf("margin %q, want %.1f (NDR %d, ceiling %d frames/s)", row.CeilingMarginPercent, want, row.NDR.FramesPerSecond, c.Ceilings[0].FramesPerSecond)
	}
	// the calibration hands it nothing: only the tester's own checks may (a preemption on a loaded host),
	// with the spoiled trials to show for it (lowerBounds)
	if row.TesterLimited {
		_ = lowerBounds(t, o)
	}
	notes := strings.Join(o.Results.Notes, "\n")
	if strings.Contains(notes, "calibrated ceiling") || (row.TesterLimited && !strings.Contains(notes, "the tester spoiled")) {
		t.Errorf("a 20.8 kframes/s token bucket, %.0f%% below the tester's ceiling, was handed to the tester: %q", want, o.Results.Notes)
	}
}

// A calibration run from the cluster (spec.tester.calibration.measure): the tester pod's runner joins the
// ports as linerate calibrate does and puts the calibration into its results ConfigMap, whence the
// operator publishes it. On a veth pair (a wire) at 1518 B, 1 Gbit/s: a ceiling and a latency floor,
// complete, that a test naming it would accept.
func TestCalibrationRunInThePod(t *testing.T) {
	eng := need(t)
	if why := testenv.Missing(); why != "" {
		t.Skip(why)
	}
	ns := wire(t, "cp")
	tt := routedTest("podcal", throughput, []int32{1518}, "1", "100", func(tt *v1alpha1.TrafficTest) {
		tt.Spec.Tester.Calibration = &v1alpha1.TesterCalibration{ConfigMapName: "tb", Measure: true, Repetitions: 1}
	})
	pr := newPodRun(t, eng, ns, tt)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var log strings.Builder
	if err := pr.run(ctx, &log); err != nil {
		t.Fatalf("RunPod: %v\n%s", err, log.String())
	}
	raw := pr.configMap(t).Data[calibration.ConfigMapKey]
	c, err := calibration.Parse([]byte(raw))
	if err != nil {
		t.Fatalf("calibration.json %q: %v\n%s", raw, err, log.String())
	}
	skipIfTheTesterSpoiledItsCalibration(t, c)
	p, err := plan.Resolve(tt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := c.Mismatch(p.CalibrationShape(), nil); d != "" {
		t.Errorf("a test of the same traffic would refuse it: %s", d)
	}
	if len(c.Ceilings) != 1 || c.Ceilings[0].FramesPerSecond <= 0 || c.Ceilings[0].FrameSize != 1518 || len(c.Ports) != 2 {
		t.Errorf("ceilings %+v ports %+v\n%s", c.Ceilings, c.Ports, log.String())
	}
	t.Logf("ceiling %+v, floor %+v", c.Ceilings, c.Floors)
	if floorSpoiledByTheTester(c) {
		if !t.Failed() {
			testenv.SkipForLoad(t, "all else checked; the tester spoiled every repetition of its latency floor on this loaded host: %+v", c.FloorsNotMeasured)
		}
		return
	}
	if len(c.Floors) != 1 || c.Floors[0].MinNs <= 0 {
		t.Errorf("floors %+v, not measured %+v", c.Floors, c.FloorsNotMeasured)
	}
}
