package runner_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/testenv"
)

// A veth pair is a wire: whatever the west port sends, the east port receives. The runner must find no
// loss at all, so the NDR is the highest rate tried, every trial's counters balance, and the frame-loss
// curve stops after its first two (loss-free) steps.

// wire makes a namespace holding a veth pair t0 <-> t1 with the MACs loopTest names.
func wire(t *testing.T, tag string) string {
	t.Helper()
	ns := fmt.Sprintf("lrg%d%s", os.Getpid()%100000, tag)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	sh(t, "ip", "netns", "add", ns)
	// the peer MACs in the YAML are these interfaces' own, so each port's frames are addressed to the other
	sh(t, "ip", "-n", ns, "link", "add", "t0", "address", "02:4c:52:00:00:01", "type", "veth", "peer", "name", "t1", "address", "02:4c:52:00:00:02")
	for _, i := range []string{"t0", "t1"} {
		sh(t, "ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf."+i+".disable_ipv6=1")
		sh(t, "ip", "-n", ns, "link", "set", i, "up")
	}
	return ns
}

func TestVethLoopLosesNothing(t *testing.T) {
	eng := need(t)
	ns := wire(t, "lp")
	o := runCLI(t, eng, ns, loopTest())
	defer logTrialsIfFailed(t, o)
	if o.Error != "" {
		t.Fatalf("run: %s", o.Error)
	}
	if len(o.Results.Throughput) != 2 {
		t.Fatalf("throughput rows %+v", o.Results.Throughput)
	}
	bounds := lowerBounds(t, o)
	for _, row := range o.Results.Throughput {
		// a wire forwards the maximum rate; a lower bound (the tester the limit) falls short of it
		v, err := strconv.ParseFloat(row.NDR.PercentOfLineRate, 64)
		if err != nil || v > 1 || (v != 1 && !bounds[rowName(row)]) || (v == 1 && row.TesterLimited) {
			t.Errorf("%d B: NDR %s%% of line rate (tester-limited %v), want the maximum 1%%", row.FrameSize, row.NDR.PercentOfLineRate, row.TesterLimited)
		}
		// the NDR is the highest rate a full-length trial the tester did not spoil passed at, and lost nothing
		highest := 0.0
		for _, tr := range o.Trials {
			if tr.Test == v1alpha1.TestThroughput && tr.Purpose != "search" && !tr.TesterLimited && tr.Pass &&
				tr.FrameSize == int(row.FrameSize) && tr.Direction == row.Direction {
				highest = max(highest, tr.OfferedPercent)
			}
		}
		if math.Abs(highest-v) > 1e-3 || row.LossPercent != "0" {
			t.Errorf("%d B: NDR %s%% (loss %s%%), the highest valid full-length pass at %.3f%%", row.FrameSize, row.NDR.PercentOfLineRate, row.LossPercent, highest)
		}
		// both are rounded from the same rate, so they agree within one frame
		if d := row.NDR.L2BitsPerSecond - row.NDR.FramesPerSecond*int64(row.FrameSize)*8; (row.NDR.FramesPerSecond <= 0 && !bounds[rowName(row)]) || d > int64(row.FrameSize)*8 || d < -int64(row.FrameSize)*8 {
			t.Errorf("%d B: NDR %d frames/s and %d L2 bit/s do not agree", row.FrameSize, row.NDR.FramesPerSecond, row.NDR.L2BitsPerSecond)
		}
	}
	// a step the loaded host's tester spoiled in every try is left out, and the run must say so (fail
	// closed); any other shortfall fails
	spoiled := func(size int32) bool {
		for _, n := range o.Results.Notes {
			if strings.HasPrefix(n, fmt.Sprintf("frame loss %d B at ", size)) && strings.Contains(n, "the tester spoiled the trial") {
				return true
			}
		}
		return false
	}
	curves := map[int32]v1alpha1.FrameLossResult{}
	for _, fl := range o.Results.FrameLoss {
		curves[fl.FrameSize] = fl
	}
	spoiledStep := false
	for _, size := range []int32{64, 1518} {
		fl := curves[size]
		if len(fl.Points) < 2 && spoiled(size) {
			spoiledStep = true
		} else if len(fl.Points) != 2 {
			t.Errorf("%d B: %d frame-loss points, want 2 (two loss-free steps end the curve)", size, len(fl.Points))
		}
		for _, p := range fl.Points {
			if p.LossPercent != "0" || p.TxFrames == 0 || p.RxFrames != p.TxFrames {
				t.Errorf("%d B frame loss at %s%%: %+v, a wire loses nothing", size, p.PercentOfLineRate, p)
			}
		}
	}
	if len(o.Trials) == 0 {
		t.Fatal("no trial records")
	}
	for _, tr := range o.Trials {
		// a trial the tester spoiled may have lost frames in the tester's own rings: it counts for nothing,
		// and must say why
		if tr.TesterLimited && len(tr.TesterFaults) > 0 {
			continue
		}
		if tr.TxFrames == 0 || tr.RxFrames != tr.TxFrames || tr.Lost != 0 {
			t.Errorf("trial %d (%s %d B at %.3f%%): tx %d rx %d lost %d on a wire", tr.Seq, tr.Test, tr.FrameSize, tr.OfferedPercent, tr.TxFrames, tr.RxFrames, tr.Lost)
		}
	}
	if spoiledStep && !t.Failed() {
		testenv.SkipForLoad(t, "every figure reported is exact; a frame-loss step the tester spoiled on this loaded host was left out, as it must be: notes %q", o.Results.Notes)
	}
	skipForLowerBounds(t, bounds, o)
}

// loopImix sends 64, 570 and 1518 B frames 7:4:1, interleaved.
var loopImix = &v1alpha1.ImixProfile{TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "ImixProfile"},
	ObjectMeta: metav1.ObjectMeta{Name: "simple"}, Spec: v1alpha1.ImixSpec{Order: v1alpha1.ImixOrderInterleaved,
		Entries: []v1alpha1.ImixEntry{{FrameSize: 64, Weight: 7}, {FrameSize: 570, Weight: 4}, {FrameSize: 1518, Weight: 1}}}}

// TestImixThroughTheCLI runs "linerate run -f test.yaml -f imix.yaml" on the wire: the ImixProfile is
// found in the second file, the NDR is the maximum rate, and the per-size classes are sent 7:4:1 and
// all arrive.
func TestImixThroughTheCLI(t *testing.T) {
	eng := need(t)
	ns := wire(t, "im")
	dir := t.TempDir()
	bin := filepath.Join(dir, "linerate")
	sh(t, "go", "build", "-o", bin, "linerate.dev/linerate/cmd/linerate")
	test := loopTest(func(tt *v1alpha1.TrafficTest) {
		tt.Spec.Tests = []v1alpha1.TestKind{v1alpha1.TestImixThroughput}
		tt.Spec.Imix = &v1alpha1.ImixSource{ProfileRef: &v1alpha1.LocalObjectReference{Name: "simple"}}
	})
	files := map[string]string{"test.yaml": asYAML(t, test), "imix.yaml": asYAML(t, loopImix)}
	for n, y := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("ip", "netns", "exec", ns, bin, "run", "-f", filepath.Join(dir, "test.yaml"), "-f", filepath.Join(dir, "imix.yaml"),
		"--engine", eng, "-o", "json")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("linerate run: %v\n%s", err, stderr.String())
	}
	var o cliOut
	if err := json.Unmarshal(out, &o); err != nil {
		t.Fatalf("-o json: %v\n%s", err, out)
	}
	if o.Error != "" || len(o.Results.Imix) != 1 {
		t.Fatalf("run: %q %+v", o.Error, o.Results)
	}
	ir := o.Results.Imix[0]
	// a lower bound falls short of the maximum, and the tester must have spoiled trials of it
	bound := ir.TesterLimited || ir.Undetermined != ""
	if v, err := strconv.ParseFloat(ir.NDR.PercentOfLineRate, 64); err != nil || v > 1 || (v != 1 && !bound) || (v == 1 && ir.TesterLimited) {
		t.Errorf("IMIX NDR %s%% of line rate (tester-limited %v), want the maximum 1%%", ir.NDR.PercentOfLineRate, ir.TesterLimited)
	}
	if spoiled := spoiledTrials(t, o, v1alpha1.TestImixThroughput); bound && spoiled["0 B "+ir.Direction] == 0 {
		t.Errorf("the IMIX NDR is a lower bound, but no IMIX trial was spoiled: %+v", ir)
	}
	if len(ir.Classes) == 0 && ir.NDR.FramesPerSecond == 0 && bound && !t.Failed() {
		// no rate passed the tester's own checks: no trial to count the classes of
		testenv.SkipForLoad(t, "the tester spoiled every IMIX trial on this loaded host: no NDR, as it must be (%+v)", ir)
	}
	if len(ir.Classes) != 3 {
		t.Fatalf("classes %+v", ir.Classes)
	}
	weight := map[int32]int64{64: 7, 570: 4, 1518: 1}
	unit := ir.Classes[0].TxFrames / weight[ir.Classes[0].FrameSize]
	for _, c := range ir.Classes {
		w, ok := weight[c.FrameSize]
		if !ok || c.RxFrames != c.TxFrames || c.LossPercent != "0" {
			t.Errorf("class %+v", c)
		}
		// the interleaved cycle is 12 frames: a trial ends at most one cycle off the exact ratio
		if d := c.TxFrames - w*unit; d > w || d < -w {
			t.Errorf("class %d B: %d frames sent, want about %d (weights 7:4:1)", c.FrameSize, c.TxFrames, w*unit)
		}
	}
	if bound && !t.Failed() {
		testenv.SkipForLoad(t, "the IMIX NDR %s%% is a lower bound on this loaded host (tester-limited %v, undetermined %q): checked from above only",
			ir.NDR.PercentOfLineRate, ir.TesterLimited, ir.Undetermined)
	}
}
