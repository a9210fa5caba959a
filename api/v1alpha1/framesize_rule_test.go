package v1alpha1_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"linerate.dev/linerate/internal/plan"
)

// The smallest and the largest frame are one rule written three times: in the CRD's CEL (api/v1alpha1,
// refused at kubectl apply), in Go (plan.MinFrameSize and plan.MaxFrameSize, refused as InvalidPlan) and in
// C (dataplane/src/frame.c lr_min_frame and frame.h LR_MAX_FRAME, the frames the engine can build). Each copy
// is asked itself: the C compiled and run, the CEL by a real API server with the generated CRD. A copy that
// drifts fails here, not as a test the API server took and the engine then refused.
func TestTheSmallestAndLargestFrameAreOneRule(t *testing.T) {
	engine := engineFrameLimits(t)
	for _, c := range []struct {
		ipVersion int
		vlan      bool
	}{{4, false}, {4, true}, {6, false}, {6, true}} {
		what := fmt.Sprintf("IPv%d", c.ipVersion)
		if c.vlan {
			what += " with VLAN"
		}
		smallest := plan.MinFrameSize(c.ipVersion, c.vlan)
		if got := engine[what]; got != smallest {
			t.Errorf("%s: plan.MinFrameSize is %d B, the engine's lr_min_frame %d B", what, smallest, got)
		}
		traffic := fmt.Sprintf("traffic: {ipVersion: %d%s}", c.ipVersion, map[bool]string{true: ", vlan: 100"}[c.vlan])
		type sizes struct {
			spec string
			ok   bool
		}
		specs := []sizes{
			{fmt.Sprintf("frameSizes: [%d]", smallest-1), false},
			{fmt.Sprintf("frameSizes: [%d]", smallest), true},
			{fmt.Sprintf("frameSizes: [%d]", plan.MaxFrameSize), true},
			{fmt.Sprintf("frameSizes: [%d]", plan.MaxFrameSize+1), false},
		}
		if c.ipVersion == 4 {
			// an IP packet is the frame less its Ethernet header and FCS (18 B, 22 B with the tag)
			ip := smallest - 18 - map[bool]int{true: 4}[c.vlan]
			specs = append(specs, sizes{fmt.Sprintf("ipPacketSizes: [%d]", ip-1), false}, sizes{fmt.Sprintf("ipPacketSizes: [%d]", ip), true})
		}
		for _, s := range specs {
			tt := parse(t, validTest, "framesize")
			tt.Spec.FrameSizes = nil
			patch := parse(t, "apiVersion: linerate.dev/v1alpha1\nkind: TrafficTest\nspec: {"+traffic+", "+s.spec+"}", "framesize")
			tt.Spec.Traffic, tt.Spec.FrameSizes, tt.Spec.IPPacketSizes = patch.Spec.Traffic, patch.Spec.FrameSizes, patch.Spec.IPPacketSizes
			err := k8s.Create(context.Background(), tt, client.DryRunAll)
			if (err == nil) != s.ok {
				t.Errorf("%s, %s: the API server says %v, want accepted %v (plan.MinFrameSize %d B, plan.MaxFrameSize %d B)",
					traffic, s.spec, err, s.ok, smallest, plan.MaxFrameSize)
			}
		}
	}
	if engine["largest"] != plan.MaxFrameSize {
		t.Errorf("plan.MaxFrameSize is %d B, the engine's LR_MAX_FRAME %d B", plan.MaxFrameSize, engine["largest"])
	}
}

// engineFrameLimits are the engine's smallest frame for each header stack (lr_min_frame) and its largest
// (LR_MAX_FRAME), from the engine's own C: dataplane/src/frame.c needs no DPDK, so it is compiled here with a
// main that prints them.
func engineFrameLimits(t *testing.T) map[string]int {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler (cc) to build dataplane/src/frame.c")
	}
	src, _ := filepath.Abs(filepath.Join("..", "..", "dataplane", "src"))
	dir := t.TempDir()
	main := filepath.Join(dir, "limits.c")
	if err := os.WriteFile(main, []byte(`#include <stdio.h>
#include "frame.h"
int main(void)
{
	printf("%u %u %u %u %u\n", lr_min_frame(4, false), lr_min_frame(4, true), lr_min_frame(6, false), lr_min_frame(6, true),
	       LR_MAX_FRAME);
	return 0;
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "limits")
	if out, err := exec.Command(cc, "-std=c11", "-I"+src, "-o", bin, main, filepath.Join(src, "frame.c")).CombinedOutput(); err != nil {
		t.Fatalf("building dataplane/src/frame.c: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	var v [5]int
	if _, err := fmt.Sscan(string(out), &v[0], &v[1], &v[2], &v[3], &v[4]); err != nil {
		t.Fatalf("the engine's limits %q: %v", out, err)
	}
	return map[string]int{"IPv4": v[0], "IPv4 with VLAN": v[1], "IPv6": v[2], "IPv6 with VLAN": v[3], "largest": v[4]}
}
