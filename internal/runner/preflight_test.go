package runner_test

import (
	"path/filepath"
	"strings"
	"testing"

	"linerate.dev/linerate/api/v1alpha1"
)

// A plan with 1600 B frames through veths of MTU 1500 (they carry 1518 B frames): the tester refuses
// before the first trial, names the port, the sizes and the fix, and keeps its preflight record. On the
// old code the run started and failed at its first stream definition with the engine's error.
func TestPreflightRefusesAFrameThePortCannotCarry(t *testing.T) {
	eng := need(t)
	tns, _ := router(t, "pf")
	tt := routedTest("jumbo", throughput, []int32{64, 1600}, "1", "5")
	o, stderr, err := execCLI(t, eng, tns, tt, "")
	if err == nil {
		t.Fatalf("a 1600 B frame through a 1500 B MTU must be refused:\n%s", stderr)
	}
	want := "port west (net_af_packet0): carries frames up to 1518 B, the plan's largest is 1600 B"
	if !strings.Contains(o.Error, want) || !strings.HasPrefix(o.Error, "preflight: ") {
		t.Fatalf("error %q, want %q", o.Error, want)
	}
	if len(o.Trials) != 0 {
		t.Errorf("a refused run measured %d trials", len(o.Trials))
	}
	pf := o.Results.Preflight
	if pf == nil || len(pf.Ports) != 2 || !pf.Ports[0].LinkUp || pf.Ports[0].MaxFrame != 1518 || pf.Ports[1].Device != "net_af_packet1" ||
		pf.Ports[0].RxQueues != 1 || len(pf.CPUs) == 0 {
		t.Fatalf("preflight record: %+v", pf)
	}
}

// A memif port whose peer never connects has its link down: refused with PortLinkDown after the wait.
func TestPreflightRefusesALinkThatStaysDown(t *testing.T) {
	eng := need(t)
	tns, _ := router(t, "pd")
	tt := routedTest("nolink", throughput, []int32{64}, "1", "5", func(tt *v1alpha1.TrafficTest) {
		tt.Spec.Ports[0].Gateway, tt.Spec.Ports[0].PeerMAC = "", "02:00:00:00:00:01"
		tt.Spec.Ports[1].Gateway, tt.Spec.Ports[1].PeerMAC = "", "02:00:00:00:00:02"
	})
	sock := filepath.Join(t.TempDir(), "memif.sock")
	o, stderr, err := execCLI(t, eng, tns, tt, "", "--port", "west=net_memif0,role=server,socket="+sock)
	if err == nil {
		t.Fatalf("a port without link must be refused:\n%s", stderr)
	}
	if !strings.Contains(o.Error, "port west (net_memif0): link down after 10s") {
		t.Fatalf("error %q\n%s", o.Error, stderr)
	}
	if pf := o.Results.Preflight; pf == nil || pf.Ports[0].LinkUp || !pf.Ports[1].LinkUp {
		t.Fatalf("preflight record: %+v", pf)
	}
}

// An af_xdp port binds one queue of its interface unless told more, while the interface here has four:
// the XDP program hands the frames of the other queues to the kernel, where the tester never sees them,
// and a run would book them as the DUT's loss. (On the old code this run failed at its first ARP, the
// router's reply having landed on an unbound queue, with "gateway did not answer ARP": the wrong cause; a
// bump-in-the-wire DUT with static MACs would have been measured with three queues' frames lost.) The
// tester refuses before the first trial, naming the port, the queues and the fix.
func TestPreflightRefusesAnAFXDPPortThatSeesOneQueueOfFour(t *testing.T) {
	eng := need(t)
	tns, rns := router(t, "xq")
	// the receiving link again, with four queues each way
	sh(t, "ip", "-n", tns, "link", "del", "t1")
	sh(t, "ip", "link", "add", "xqt1", "numtxqueues", "4", "numrxqueues", "4", "type", "veth", "peer", "name", "xqr1", "numtxqueues", "4", "numrxqueues", "4")
	sh(t, "ip", "link", "set", "xqt1", "netns", tns)
	sh(t, "ip", "link", "set", "xqr1", "netns", rns)
	sh(t, "ip", "-n", tns, "link", "set", "xqt1", "name", "t1", "up")
	sh(t, "ip", "-n", rns, "link", "set", "xqr1", "name", "r1", "up")
	sh(t, "ip", "netns", "exec", tns, "sysctl", "-qw", "net.ipv6.conf.t1.disable_ipv6=1")
	sh(t, "ip", "-n", rns, "addr", "add", "198.19.1.1/24", "dev", "r1")
	tt := routedTest("xdpq", throughput, []int32{64}, "1", "5", func(tt *v1alpha1.TrafficTest) {
		tt.Spec.Ports[1].Driver = v1alpha1.DriverAFXDP
	})
	o, stderr, err := execCLI(t, eng, tns, tt, "")
	if err == nil {
		t.Fatalf("an af_xdp port that sees one of four receive queues must be refused; results %+v\n%s", o.Results.Throughput, stderr)
	}
	if strings.Contains(o.Error, "af_xdp") && strings.Contains(o.Error, "unavailable") {
		t.Skipf("net_af_xdp unavailable here: %s", o.Error)
	}
	want := "port east (net_af_xdp1): af_xdp receives on 1 of interface t1's 4 receive queues"
	if !strings.Contains(o.Error, want) || !strings.HasPrefix(o.Error, "preflight: ") {
		t.Fatalf("error %q, want %q\n%s", o.Error, want, stderr)
	}
	if len(o.Trials) != 0 {
		t.Errorf("a refused run measured %d trials", len(o.Trials))
	}
	if pf := o.Results.Preflight; pf == nil || len(pf.Ports) != 2 || pf.Ports[1].RxQueues != 1 {
		t.Fatalf("preflight record: %+v", pf)
	}
}
