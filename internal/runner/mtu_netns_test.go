package runner_test

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/testenv"
)

// A router whose egress MTU (1400) is smaller than the largest frame size refuses those frames (they carry
// DF) and sends ICMP "fragmentation needed" for each. Through the CLI: the 1518 B row is a result (NDR 0,
// refused, naming the MTU), not a stall that ends the run; 1418 B, exactly the MTU, crosses and is
// measured, as is 64 B; latency skips the refused size; the trial records count exactly the errors the
// router's own counter says it sent.
func TestAPathMTUSmallerThanAFrameIsAResult(t *testing.T) {
	eng := need(t)
	tns, rns := router(t, "mt")
	sh(t, "ip", "-n", rns, "link", "set", "r1", "mtu", "1400")
	// one error a refused frame (the kernel's rate limits off): the count is the router's, not its limiter's
	sh(t, "ip", "netns", "exec", rns, "sysctl", "-qw", "net.ipv4.icmp_ratelimit=0")
	sh(t, "ip", "netns", "exec", rns, "sysctl", "-qw", "net.ipv4.icmp_msgs_per_sec=1000000")
	before := fragNeededSent(t, rns)
	o := runCLI(t, eng, tns, routedTest("mtu", []v1alpha1.TestKind{v1alpha1.TestThroughput, v1alpha1.TestLatency},
		[]int32{64, 1418, 1518}, "0.5", "2"))
	sent := fragNeededSent(t, rns) - before
	defer logTrialsIfFailed(t, o)
	if o.Error != "" {
		t.Fatalf("a size that does not fit must not end the run: %q", o.Error)
	}
	_ = spoiledTrials(t, o, v1alpha1.TestThroughput) // every fault is one load explains
	rows := map[int32]v1alpha1.ThroughputResult{}
	for _, r := range o.Results.Throughput {
		rows[r.FrameSize] = r
	}
	// (on a loaded host the tester may spoil a size's search down to nothing, and say so: a row it limited
	// is skipped for load at the end, after every other claim)
	var spoiled []int32
	for _, size := range []int32{64, 1418} {
		r, ok := rows[size]
		if ok && r.Refused == "" && r.NDR.FramesPerSecond <= 0 && r.TesterLimited {
			spoiled = append(spoiled, size)
			continue
		}
		if !ok || r.Refused != "" || r.NDR.FramesPerSecond <= 0 {
			t.Errorf("%d B fits the path MTU and is measured: %+v", size, r)
		}
	}
	big := rows[1518]
	if big.Refused != "too big for the path MTU 1400 (the DUT's ICMP)" || big.NDR.FramesPerSecond != 0 {
		t.Errorf("1518 B is refused, NDR 0, naming the MTU: %+v", big)
	}
	var counted int64
	for _, tr := range o.Trials {
		if tr.TooBig == 0 {
			continue
		}
		counted += tr.TooBig
		if tr.FrameSize != 1518 || tr.PathMTU != 1400 || tr.RxFrames != 0 {
			t.Errorf("only 1518 B frames were refused, with the router's MTU: %+v", tr)
		}
	}
	t.Logf("1518 B: %d ICMP errors in the trial records, %d sent by the router; rows %+v", counted, sent, o.Results.Throughput)
	if counted == 0 || counted != sent {
		t.Errorf("the trial records count %d errors; the router sent %d", counted, sent)
	}
	notes := strings.Join(o.Results.Notes, "\n")
	for _, want := range []string{"latency 1518 B was not run: the DUT refused every frame of that size",
		"the largest frame that crosses it whole is 1418 B"} {
		if !strings.Contains(notes, want) {
			t.Errorf("the notes must say %q: %q", want, o.Results.Notes)
		}
	}
	for _, l := range o.Results.Latency {
		if l.FrameSize == 1518 {
			t.Errorf("latency at a refused size: %+v", l)
		}
	}
	if len(spoiled) > 0 {
		testenv.SkipForLoad(t, "the tester spoiled the search of %v B down to nothing, and said so", spoiled)
	}
}

// fragNeededSent is the router's own count of the ICMP destination unreachables it sent (IcmpMsg OutType3;
// fragmentation needed is the only kind this router sends).
func fragNeededSent(t *testing.T, ns string) int64 { return snmpCounter(t, ns, "IcmpMsg", "OutType3") }

// snmpCounter is one counter of the namespace's /proc/net/snmp (0 while its row has none of that name yet:
// IcmpMsg lists only the message types seen).
func snmpCounter(t *testing.T, ns, row, name string) int64 {
	t.Helper()
	out, err := exec.Command("ip", "netns", "exec", ns, "cat", "/proc/net/snmp").Output()
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, row+":") {
			rows = append(rows, strings.Fields(l)[1:])
		}
	}
	if len(rows) < 2 {
		return 0
	}
	for i, n := range rows[0] {
		if n == name {
			v, err := strconv.ParseInt(rows[1][i], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	return 0
}

// The path MTU finder through the CLI, against routers whose MTU is known: one that refuses larger frames
// with ICMP (IPv4 at 1400, IPv6 at 1280, its egress MTU), and one that drops them silently (an nft rule on
// the IP length, no ICMP). Each answer is exactly the largest frame that fits, in each direction on its own.
func TestThePathMTUFinderFindsTheRoutersMTU(t *testing.T) {
	eng := need(t)
	for _, c := range []struct {
		name    string
		ip      int
		setup   func(t *testing.T, rns string)
		largest int32
		icmp    int32
		silent  bool
	}{
		// the routes' MTU, locked, not the links': a veth drops a frame larger than its own MTU on receipt,
		// silently, which would make one direction of each pair the silent case
		{name: "icmp", ip: 4, largest: 1418, icmp: 1400, setup: func(t *testing.T, rns string) {
			sh(t, "ip", "-n", rns, "route", "replace", "198.19.1.0/24", "dev", "r1", "mtu", "lock", "1400")
			sh(t, "ip", "-n", rns, "route", "replace", "198.18.1.0/24", "dev", "r0", "mtu", "lock", "1400")
		}},
		{name: "silent", ip: 4, largest: 1455, silent: true, setup: func(t *testing.T, rns string) {
			// the forwarding path drops IP packets over 1437 B and says nothing
			nft(t, rns, `table inet lrt {
  chain lrfwd { type filter hook forward priority 0; policy accept;
    ip length > 1437 drop
  }
}`)
		}},
		{name: "ipv6", ip: 6, largest: 1298, icmp: 1280},
	} {
		t.Run(c.name, func(t *testing.T) {
			tns, rns := router(t, "pm"+c.name[:1])
			if c.setup != nil {
				c.setup(t, rns)
			}
			tt := routedTest("pmtu", []v1alpha1.TestKind{v1alpha1.TestPathMTU}, []int32{64}, "1", "1")
			tt.Spec.Traffic.Direction = v1alpha1.Bidirectional
			if c.ip == 6 {
				ipv6Router(t, rns)
				tt.Spec.Traffic.IPVersion = 6
				tt.Spec.FrameSizes = []int32{128} // (unused: the finder sizes its own; IPv6's smallest is 84 B)
				tt.Spec.Ports[0].Address, tt.Spec.Ports[0].Gateway = "2001:db8:1::2/64", "2001:db8:1::1"
				tt.Spec.Ports[1].Address, tt.Spec.Ports[1].Gateway = "2001:db8:2::2/64", "2001:db8:2::1"
			}
			o := runCLI(t, eng, tns, tt)
			defer logTrialsIfFailed(t, o)
			if o.Error != "" || len(o.Results.PathMTU) != 2 {
				t.Fatalf("run: %q %+v", o.Error, o.Results.PathMTU)
			}
			t.Logf("%+v", o.Results.PathMTU)
			for _, m := range o.Results.PathMTU {
				if m.Undetermined != "" && strings.Contains(m.Undetermined, "the tester spoiled") {
					t.Skipf("the tester spoiled every try of a probe on this loaded host: %+v", m)
				}
				want := v1alpha1.PathMTUResult{Direction: m.Direction, LargestFrame: c.largest, MTU: c.largest - 18,
					ICMPMTU: c.icmp, Silent: c.silent, Probes: m.Probes}
				if m != want {
					t.Errorf("got %+v, want %+v", m, want)
				}
			}
		})
	}
}

// ipv6Router gives the router of router() IPv6 on both links (2001:db8:1::1 and 2001:db8:2::1, forwarding;
// the engine answers neighbour discovery for the tester's addresses itself), at an IPv6 MTU of 1280.
func ipv6Router(t *testing.T, rns string) {
	t.Helper()
	for _, l := range []string{"r0", "r1"} {
		sh(t, "ip", "netns", "exec", rns, "sysctl", "-qw", "net.ipv6.conf."+l+".disable_ipv6=0")
	}
	sh(t, "ip", "netns", "exec", rns, "sysctl", "-qw", "net.ipv6.conf.all.forwarding=1")
	sh(t, "ip", "netns", "exec", rns, "sysctl", "-qw", "net.ipv6.icmp.ratelimit=0")
	sh(t, "ip", "-n", rns, "-6", "addr", "add", "2001:db8:1::1/64", "dev", "r0", "nodad")
	sh(t, "ip", "-n", rns, "-6", "addr", "add", "2001:db8:2::1/64", "dev", "r1", "nodad")
	// IPv6's smallest MTU as each link's IPv6 MTU, which forwarding uses (the links keep theirs: see the
	// IPv4 case)
	for _, l := range []string{"r0", "r1"} {
		sh(t, "ip", "netns", "exec", rns, "sysctl", "-qw", "net.ipv6.conf."+l+".mtu=1280")
	}
}

// Frames sent with DF clear (spec.traffic.dontFragment false) through a router whose route MTU is 1400: it
// fragments the 1518 B ones instead of refusing them. Through the CLI: the finder answers 1418 B and says the
// DUT fragmented the next larger frame; 1518 B is measured, not refused, and every frame of it that arrived
// came in two fragments, both of which arrived (the trial records' counts); the router's own count of the
// frames it fragmented covers the records' (it fragments warm-up frames too, which no record counts). The
// receiving port is af_xdp: an af_packet port's kernel socket reassembles fragments before the engine sees
// them (and a finder with DF clear is refused there).
func TestFramesTheDUTFragmentsAreMeasuredAndCounted(t *testing.T) {
	o, fragmented := fragmentingRun(t, "fr", []v1alpha1.TestKind{v1alpha1.TestPathMTU, v1alpha1.TestThroughput}, []int32{1518}, "")
	defer logTrialsIfFailed(t, o)
	if len(o.Results.PathMTU) != 1 {
		t.Fatalf("one direction, one finder row: %+v", o.Results.PathMTU)
	}
	if m := o.Results.PathMTU[0]; strings.Contains(m.Undetermined, "the tester spoiled") {
		t.Skipf("the tester spoiled every try of a probe on this loaded host: %+v", m)
	} else if want := (v1alpha1.PathMTUResult{Direction: m.Direction, LargestFrame: 1418, MTU: 1400, Fragmented: true,
		Probes: m.Probes}); m != want {
		t.Errorf("finder: got %+v, want %+v", m, want)
	}
	if len(o.Results.Throughput) != 1 {
		t.Fatalf("one size, one direction, one throughput row: %+v", o.Results.Throughput)
	}
	row := o.Results.Throughput[0]
	// (on a loaded host the tester may spoil the search, and say so: the row then has no NDR trial of the DUT)
	rowSpoiled := row.TesterLimited || row.Undetermined != ""
	if row.Refused != "" || (row.NDR.FramesPerSecond <= 0 && !rowSpoiled) {
		t.Errorf("1518 B crosses in fragments and is measured: %+v", row)
	}
	var counted int64
	var rowsTrial bool
	for _, tr := range o.Trials {
		if tr.Test != v1alpha1.TestThroughput || tr.RxFrames == 0 || tr.TesterLimited {
			continue // (a trial the tester spoiled, e.g. its ring dropped a fragment on a busy host)
		}
		if f := row.Fragmented; f != nil && tr.Lost == 0 && *f == (v1alpha1.FragmentCounts{Frames: tr.Fragmented,
			Percent: "100", Whole: tr.Fragmented, Fragments: 2 * tr.Fragmented}) {
			rowsTrial = true
		}
		counted += tr.Fragmented
		if tr.Fragmented != tr.RxFrames || tr.FragmentedWhole != tr.Fragmented || tr.Fragments != 2*tr.Fragmented {
			t.Errorf("every 1518 B frame that arrived came in two fragments, both of which arrived: %+v", tr)
		}
	}
	t.Logf("router fragmented %d frames in the run; the throughput records count %d; finder %+v; the row's %+v", fragmented, counted,
		o.Results.PathMTU, row.Fragmented)
	if !rowsTrial && !rowSpoiled {
		t.Errorf("the row's fragment counts %+v are those of none of its passing trials", row.Fragmented)
	}
	if f := row.Fragmented; f != nil && (f.Frames == 0 || f.Whole != f.Frames || f.Fragments != 2*f.Frames || f.Percent != "100") {
		t.Errorf("every 1518 B frame of the row's trial came whole in two fragments: %+v", *f)
	}
	if counted == 0 || counted > fragmented {
		t.Errorf("the records count %d fragmented frames; the router fragmented %d", counted, fragmented)
	}
	if notes := strings.Join(o.Results.Notes, "\n"); !strings.Contains(notes, "the DUT fragmented frames of 1518 B") {
		t.Errorf("the notes must say the DUT fragmented 1518 B frames: %q", o.Results.Notes)
	}
	if rowSpoiled {
		testenv.SkipForLoad(t, "the tester spoiled 1518 B's search, and said so: %+v", row)
	}
}

// Through a route of MTU 1400 with DF clear, and fragmented frames counting as lost (a DUT that must carry
// them whole), 1518 B is refused as fragmented from its first trial, with no search down to the floor: the
// router fragmented every frame of it (its FragOKs count what the trial sent, warm-up frames too). 64 B is
// measured.
func TestFramesTheSpecWantsWholeAreRefusedWhenTheDUTFragmentsThem(t *testing.T) {
	o, fragmented := fragmentingRun(t, "fl", []v1alpha1.TestKind{v1alpha1.TestThroughput}, []int32{64, 1518}, v1alpha1.FragmentedLost)
	defer logTrialsIfFailed(t, o)
	rows := map[int32]v1alpha1.ThroughputResult{}
	for _, row := range o.Results.Throughput {
		rows[row.FrameSize] = row
	}
	// (on a loaded host the tester may spoil 64 B's trials down to nothing, and say so: not the point here)
	if small := rows[64]; small.Refused != "" || (small.NDR.FramesPerSecond <= 0 && !small.TesterLimited) || small.Fragmented != nil {
		t.Errorf("64 B crosses whole and is measured: %+v", small)
	}
	big := rows[1518]
	if big.Refused != "fragmented by the DUT, and counted as lost (spec.traffic.fragmentedFrames)" || big.NDR.FramesPerSecond != 0 ||
		big.LossPercent != "100" || big.Trials != 1 {
		t.Errorf("1518 B is refused as fragmented by its first trial: %+v", big)
	}
	t.Logf("%+v", big)
	everyFrameCameInFragments(t, o, 1518, fragmented)
}

// everyFrameCameInFragments checks the trials of a size (0: an IMIX's) through the fragmenting router: every
// frame that arrived came in fragments, and the router fragmented at least the measured frames they sent.
func everyFrameCameInFragments(t *testing.T, o cliOut, size int, fragmented int64) {
	t.Helper()
	var sent int64
	for _, tr := range o.Trials {
		if tr.FrameSize != size {
			continue
		}
		sent += tr.TxFrames
		if tr.Fragmented != tr.RxFrames-tr.Duplicates || tr.Fragmented == 0 {
			t.Errorf("every frame of %d B (0: the mix) that arrived came in fragments: %+v", size, tr)
		}
	}
	t.Logf("the router fragmented %d frames; the trials of %d B (0: the mix) sent %d measured frames", fragmented, size, sent)
	if sent == 0 || fragmented < sent {
		t.Errorf("the router fragmented %d frames, fewer than the %d measured frames of %d B sent", fragmented, sent, size)
	}
}

// An IMIX every size of which is above the router's MTU of 1400 (1450 and 1518 B, DF clear), with fragments
// counted as lost, is refused by its first trial: the router fragmented every frame of it that it forwarded
// (its own FragOKs), none crossed whole.
func TestAnImixTheDUTFragmentsWholeIsRefusedByItsFirstTrial(t *testing.T) {
	o, fragmented := fragmentingRun(t, "fi", []v1alpha1.TestKind{v1alpha1.TestImixThroughput}, []int32{64}, v1alpha1.FragmentedLost,
		func(tt *v1alpha1.TrafficTest) {
			tt.Spec.Imix = &v1alpha1.ImixSource{Entries: []v1alpha1.ImixEntry{{FrameSize: 1450, Weight: 3}, {FrameSize: 1518, Weight: 1}}}
		})
	defer logTrialsIfFailed(t, o)
	if len(o.Results.Imix) != 1 {
		t.Fatalf("one IMIX row: %+v", o.Results.Imix)
	}
	row := o.Results.Imix[0]
	if row.Refused != "fragmented by the DUT, and counted as lost (spec.traffic.fragmentedFrames)" || row.NDR.FramesPerSecond != 0 ||
		row.LossPercent != "100" || row.Trials != 1 {
		t.Errorf("the IMIX is refused as fragmented by its first trial: %+v", row)
	}
	t.Logf("%+v", row)
	everyFrameCameInFragments(t, o, 0, fragmented)
}

// fragmentingRun runs tests at sizes through a router whose route toward the receiver has MTU 1400, the
// frames sent with DF clear, received on an af_xdp port (an af_packet socket reassembles fragments); it
// returns the run and how many datagrams the router fragmented meanwhile (skipped where af_xdp cannot run);
// more change the test further.
func fragmentingRun(t *testing.T, tag string, tests []v1alpha1.TestKind, sizes []int32, counted v1alpha1.FragmentedFrames, more ...func(*v1alpha1.TrafficTest)) (cliOut, int64) {
	t.Helper()
	eng := need(t)
	tns, rns := router(t, tag)
	sh(t, "ip", "-n", rns, "route", "replace", "198.19.1.0/24", "dev", "r1", "mtu", "lock", "1400")
	before := routerFragmented(t, rns)
	dfClear := false
	o, stderr, err := execCLI(t, eng, tns, routedTest("frag"+tag, tests, sizes, "1", "1", func(tt *v1alpha1.TrafficTest) {
		tt.Spec.Traffic.DontFragment = &dfClear
		tt.Spec.Traffic.FragmentedFrames = counted
		tt.Spec.Ports[1].Driver = v1alpha1.DriverAFXDP
		for _, m := range more {
			m(tt)
		}
	}), "")
	fragmented := routerFragmented(t, rns) - before
	if strings.Contains(o.Error, "af_xdp") && strings.Contains(o.Error, "unavailable") {
		t.Skipf("net_af_xdp unavailable here: %s", o.Error)
	}
	if err != nil || o.Error != "" {
		t.Errorf("run: %v %q\n%s", err, o.Error, stderr)
		logTrialsIfFailed(t, o)
		t.FailNow()
	}
	return o, fragmented
}

// routerFragmented is the router's own count of the datagrams it fragmented (Ip FragOKs).
func routerFragmented(t *testing.T, ns string) int64 { return snmpCounter(t, ns, "Ip", "FragOKs") }
