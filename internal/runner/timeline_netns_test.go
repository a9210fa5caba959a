package runner_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/results"
	"linerate.dev/linerate/internal/testenv"
)

// nftCounter reads a named counter of table inet lrt in namespace ns.
func nftCounter(t *testing.T, ns, name string) int64 {
	t.Helper()
	out, err := exec.Command("ip", "netns", "exec", ns, "nft", "-j", "list", "counter", "inet", "lrt", name).Output()
	if err != nil {
		t.Fatalf("nft list counter %s: %v", name, err)
	}
	var doc struct {
		Nftables []struct {
			Counter *struct {
				Packets int64 `json:"packets"`
			} `json:"counter"`
		} `json:"nftables"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	for _, x := range doc.Nftables {
		if x.Counter != nil {
			return x.Counter.Packets
		}
	}
	t.Fatalf("no counter %s", name)
	return 0
}

// A timeline through the real CLI and engine: the router drops everything for a hold the test sets while
// the load runs, and the run reports one outage of exactly the frames nft dropped, at the right length.
func TestTimelineFindsAnOutageToTheFrame(t *testing.T) {
	eng := need(t)
	tns, rns := router(t, "tl")
	holdTable(t, rns, "held")
	const fps, hold = 1500, 300 * time.Millisecond
	tt := routedTest("timeline", []v1alpha1.TestKind{v1alpha1.TestTimeline}, []int32{128}, "1", "1", func(tt *v1alpha1.TrafficTest) {
		tt.Spec.Timeline = v1alpha1.TimelineParams{Duration: dur(6 * time.Second), FramesPerSecond: fps, Bin: dur(100 * time.Millisecond)}
		// What is shown is the outage, not the pacing: a sender that falls 20 ms behind (a loaded host's)
		// owes 30 frames, which the router forwards as it does any burst that small.
		tt.Spec.Tester.Validity = v1alpha1.TrialValidity{MaxTxLag: dur(20 * time.Millisecond), MaxWorkerGap: dur(20 * time.Millisecond)}
	})
	done := make(chan cliOut, 1)
	go func() { done <- runCLI(t, eng, tns, tt) }()
	waitForwarded(t, rns, fps)
	time.Sleep(time.Second)
	outerStart := time.Now()
	nft(t, rns, "add rule inet lrt lrfwd ip daddr 198.19.1.0/24 counter name \"held\" drop\n")
	innerStart := time.Now()
	time.Sleep(hold)
	innerEnd := time.Now()
	nft(t, rns, "delete rule inet lrt lrfwd handle "+lastRuleHandle(t, rns)+"\n")
	outer := time.Since(outerStart)
	inner := innerEnd.Sub(innerStart)
	o := <-done
	defer logTrialsIfFailed(t, o)
	if o.Error != "" || len(o.Results.Timeline) != 1 {
		t.Fatalf("run: %q timeline %+v", o.Error, o.Results.Timeline)
	}
	row := o.Results.Timeline[0]
	held := nftCounter(t, rns, "held")
	if row.TesterLimited {
		testenv.SkipForLoad(t, "the tester spoiled %d of %d bins: %+v", row.TesterBins, row.Bins, o.Results.Notes)
	}
	if row.TesterOutages > 0 {
		testenv.SkipForLoad(t, "the hold fell in bins the tester spoiled (%d tester outages)", row.TesterOutages)
	}
	if row.Outages != 1 || len(row.Longest) != 1 {
		t.Fatalf("outages %d %+v, want 1 (nft held %d frames)", row.Outages, row.Longest, held)
	}
	out := row.Longest[0]
	if out.Frames != held || row.LostFrames != held || row.OutageFrames != held || row.ScatteredFrames != 0 {
		t.Errorf("outage %d frames, lost %d, outage frames %d, scattered %d: nft held exactly %d", out.Frames, row.LostFrames, row.OutageFrames, row.ScatteredFrames, held)
	}
	length := time.Duration(out.Frames) * time.Second / fps
	slack := 2 * time.Second / fps
	if length < inner-slack || length > outer+slack {
		t.Errorf("outage of %s (%d frames at %d frames/s): the hold lasted between %s and %s", length, out.Frames, fps, inner, outer)
	}
	start, err := time.Parse(time.RFC3339Nano, out.Start)
	if err != nil || start.Before(outerStart.Add(-50*time.Millisecond)) || start.After(innerStart.Add(50*time.Millisecond)) {
		t.Errorf("outage start %s (%v): the hold began between %s and %s", out.Start, err, outerStart.UTC().Format(time.RFC3339Nano), innerStart.UTC().Format(time.RFC3339Nano))
	}
	if row.Bins != 60 || row.TxFrames != 6*fps {
		t.Errorf("bins %d, tx %d: want 60 bins of 6 s and %d frames", row.Bins, row.TxFrames, 6*fps)
	}
	var rec int
	for _, tr := range o.Trials {
		if tr.Test == v1alpha1.TestTimeline && tr.Timeline != nil && len(tr.Timeline.Outages) == 1 && tr.Timeline.Outages[0].Frames == held {
			rec++
		}
	}
	if rec != 1 {
		t.Errorf("the trial records hold the outage %d times, want once", rec)
	}
}

// holdTable gives the router namespace rns table inet lrt: a counter "passed" of what it forwards toward
// the receiver, chain lrfwd for the holds a test adds, and a named counter for each of them.
func holdTable(t *testing.T, rns string, holds ...string) {
	t.Helper()
	counters := ""
	for _, h := range holds {
		counters += "  counter " + h + " {}\n"
	}
	nft(t, rns, "table inet lrt {\n  counter passed {}\n"+counters+`  chain lrfwd { type filter hook forward priority 0; policy accept;
    ip daddr 198.19.1.0/24 counter name "passed"
  }
}`)
}

// waitForwarded returns once the router has forwarded frames toward the receiver (the load is running:
// warm-up frames are few), or after a minute.
func waitForwarded(t *testing.T, rns string, frames int64) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for nftCounter(t, rns, "passed") < frames && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
}

// lastRuleHandle is the handle of the last rule of chain lrfwd (the hold).
func lastRuleHandle(t *testing.T, ns string) string {
	t.Helper()
	out, err := exec.Command("ip", "netns", "exec", ns, "nft", "-a", "list", "chain", "inet", "lrt", "lrfwd").Output()
	if err != nil {
		t.Fatal(err)
	}
	h := ""
	for _, l := range strings.Split(string(out), "\n") {
		if i := strings.Index(l, "# handle "); i >= 0 && strings.Contains(l, "drop") {
			h = strings.TrimSpace(l[i+len("# handle "):])
		}
	}
	if h == "" {
		t.Fatalf("no drop rule in %s", out)
	}
	return h
}

// rekeyTimes are the moments gw-a's charon log says a CHILD_SA was established (UTC; the log has times
// of day only: each is put on the day that brings it nearest to around, across midnight too).
func rekeyTimes(t *testing.T, log string, around time.Time) []time.Time {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	y, m, d := around.UTC().Date()
	var out []time.Time
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.Contains(l, "CHILD_SA net{") || !strings.Contains(l, "established") {
			continue
		}
		hms, err := time.Parse("15:04:05.000", strings.Fields(l)[0])
		if err != nil {
			t.Fatalf("charon log line %q: %v (the gateways log milliseconds: time_add_ms)", l, err)
		}
		at := time.Date(y, m, d, hms.Hour(), hms.Minute(), hms.Second(), hms.Nanosecond(), time.UTC)
		if at.Sub(around) > 12*time.Hour {
			at = at.AddDate(0, 0, -1)
		} else if around.Sub(at) > 12*time.Hour {
			at = at.AddDate(0, 0, 1)
		}
		out = append(out, at)
	}
	return out
}

// Real strongSwan gateways (hack/dut, userspace ESP) rekeying their CHILD_SA every few seconds, under a
// timeline: every frame the pair lost lies in an outage, and every outage lines up with a rekey in the
// initiator's log. Whether a rekey loses frames, and how many, is the gateways' to say: the test shows it.
func TestTimelineLinesOutagesUpWithRealRekeys(t *testing.T) {
	eng := need(t)
	name := fmt.Sprintf("lrk%d", os.Getpid()%100000)
	up := exec.Command("bash", "../../hack/dut/ipsec-gateway-up.sh", name)
	// the charons keep to CPU 0, as in the demo: a rekey's key exchange then does not take the CPU the
	// tester's worker runs on (lcore 1) exactly when the outage it causes is to be measured
	up.Env = append(os.Environ(), "DUT_REKEY_TIME=5s")
	if runtime.NumCPU() >= 2 {
		up.Env = append(up.Env, "DUT_CPUS=0")
	}
	tns := name + "t"
	t.Cleanup(func() {
		_ = exec.Command("ip", "netns", "del", tns).Run()
		_ = exec.Command("bash", "../../hack/dut/ipsec-gateway-down.sh", name).Run()
	})
	if out, err := up.CombinedOutput(); err != nil {
		t.Fatalf("ipsec-gateway-up.sh: %v\n%s", err, out)
	}
	// the tester's ends of the gateways' links go into a namespace of the test's, named as routedTest wants
	sh(t, "ip", "netns", "add", tns)
	for _, p := range [][2]string{{name + "-w", "t0"}, {name + "-e", "t1"}} {
		sh(t, "ip", "link", "set", p[0], "netns", tns)
		sh(t, "ip", "-n", tns, "link", "set", p[0], "name", p[1], "up")
	}
	const fps = 2000
	tt := routedTest("rekey", []v1alpha1.TestKind{v1alpha1.TestTimeline}, []int32{128}, "1", "1", func(tt *v1alpha1.TrafficTest) {
		// what is judged is where the outages lie, so the tester may spoil a tenth of the bins (its sender
		// falls behind when the gateways' userspace ESP takes the CPUs) as long as no lost frame is in them
		tt.Spec.Timeline = v1alpha1.TimelineParams{Duration: dur(16 * time.Second), FramesPerSecond: fps,
			Bin: dur(100 * time.Millisecond), Settle: dur(300 * time.Millisecond), MaxTesterSpoiled: "10"}
		tt.Spec.Traffic.Flows = 4
		tt.Spec.Traffic.Vary = []v1alpha1.FlowField{"srcPort"}
		tt.Spec.Tester.Validity = v1alpha1.TrialValidity{MaxTxLag: dur(20 * time.Millisecond), MaxWorkerGap: dur(20 * time.Millisecond)}
	})
	o := runCLI(t, eng, tns, tt)
	defer logTrialsIfFailed(t, o)
	if o.Error != "" || len(o.Results.Timeline) != 1 {
		t.Fatalf("run: %q timeline %+v", o.Error, o.Results.Timeline)
	}
	row := o.Results.Timeline[0]
	if row.TesterLimited || row.TesterOutages > 0 || row.TesterLostFrames > 0 {
		var marked [][4]int64
		for _, tr := range o.Trials {
			if tr.Timeline != nil {
				marked = append(marked, tr.Timeline.Marked...)
			}
		}
		testenv.SkipForLoad(t, "the tester spoiled %d of %d bins (%d outages, %d frames lost in them); marked bins [index sent received flags]: %v",
			row.TesterBins, row.Bins, row.TesterOutages, row.TesterLostFrames, marked)
	}
	if row.StartTime == nil {
		t.Fatalf("no start time: %+v", o.Results.Notes)
	}
	rekeys := rekeyTimes(t, "/var/tmp/linerate-dut/"+name+"/gw-a/charon.log", row.StartTime.Time)
	start, end := row.StartTime.Time, row.StartTime.Add(16*time.Second)
	in := 0
	for _, r := range rekeys {
		if r.After(start) && r.Before(end) {
			in++
		}
	}
	if in < 2 {
		t.Fatalf("%d rekeys in the 16 s measured (gateways told to rekey every 5 s): %v", in, rekeys)
	}
	nearest := func(at time.Time) time.Duration {
		near := time.Duration(1<<62 - 1)
		for _, r := range rekeys {
			near = min(near, max(at.Sub(r), r.Sub(at)))
		}
		return near
	}
	for _, out := range row.Longest {
		at, err := time.Parse(time.RFC3339Nano, out.Start)
		if err != nil {
			t.Fatal(err)
		}
		near := nearest(at)
		t.Logf("outage at %s: %d frames (%s ms), %s from the nearest rekey", out.Start, out.Frames, out.Milliseconds, near)
		if near > 250*time.Millisecond {
			t.Errorf("outage at %s (%d frames) is %s from any rekey in the gateway's log", out.Start, out.Frames, near)
		}
	}
	// A rekey may lose one frame alone (the last sealed with the old SA arrives after it is gone): too few
	// for an outage, so scattered loss. Every bin that lost a frame, in an outage or not, lies by a rekey.
	var tl *results.Timeline
	for _, tr := range o.Trials {
		if tr.Test == v1alpha1.TestTimeline && tr.Timeline != nil {
			tl = tr.Timeline
		}
	}
	if tl == nil || tl.MarkedLeftOut > 0 {
		t.Fatalf("no timeline record with every marked bin: %+v", tl)
	}
	bin := time.Duration(tl.BinMs) * time.Millisecond
	var inBins int64
	for _, m := range tl.Marked {
		lost := m[1] - m[2]
		if m[3] != 0 || lost <= 0 {
			continue
		}
		inBins += lost
		from := time.Unix(0, tl.StartNs+m[0]*int64(bin))
		// the bin's nearest point to a rekey: its start, its end, or the rekey itself inside it
		near := min(nearest(from), nearest(from.Add(bin)))
		for _, r := range rekeys {
			if !r.Before(from) && r.Before(from.Add(bin)) {
				near = 0
			}
		}
		if near > 250*time.Millisecond {
			t.Errorf("bin %d (%s) lost %d frames %s from any rekey in the gateway's log: loss no rekey explains",
				m[0], from.UTC().Format(time.RFC3339Nano), lost, near)
		}
	}
	if int(row.Outages) > len(row.Longest) || inBins != row.LostFrames || row.OutageFrames+row.ScatteredFrames != row.LostFrames {
		t.Errorf("%d frames lost (%d in outages, %d scattered), %d in the marked bins, %d outages listed of %d",
			row.LostFrames, row.OutageFrames, row.ScatteredFrames, inBins, len(row.Longest), row.Outages)
	}
	t.Logf("%d rekeys in the measurement, %d outages, %d frames lost at %d frames/s", in, row.Outages, row.LostFrames, fps)
}
