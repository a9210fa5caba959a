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
