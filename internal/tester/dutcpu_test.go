package tester

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/cgroupcpu"
	"linerate.dev/linerate/internal/plan"
)

// The pod that runs the runner reads the DUT's cgroup (spec.dut.cpu) through its node's /sys/fs/cgroup,
// mounted read-only; a receiver pod and a test without it mount nothing of the node's.
func TestTheRunnersPodMountsTheNodesCgroupsForTheDUTsCPU(t *testing.T) {
	for _, c := range []struct {
		name  string
		cpu   bool
		nodes [2]string
		want  map[string]bool // role: mounts the node's cgroups
	}{
		{"one pod", true, [2]string{"", ""}, map[string]bool{RoleTester: true}},
		{"split: the generator runs the runner", true, [2]string{"a", "b"}, map[string]bool{RoleGenerator: true, RoleReceiver: false}},
		{"no spec.dut.cpu", false, [2]string{"", ""}, map[string]bool{RoleTester: false}},
	} {
		tt := &v1alpha1.TrafficTest{ObjectMeta: metav1.ObjectMeta{Name: "t", Namespace: "ns"}, Spec: v1alpha1.TrafficTestSpec{
			Tests: []v1alpha1.TestKind{v1alpha1.TestThroughput}, FrameSizes: []int32{64},
			Traffic: v1alpha1.TrafficParams{Direction: v1alpha1.Unidirectional, LineRate: "10G"},
			Ports: []v1alpha1.PortSpec{{Name: "west", Network: "w", Resource: "r", Node: c.nodes[0]},
				{Name: "east", Network: "e", Resource: "r", Node: c.nodes[1]}}}}
		if c.cpu {
			tt.Spec.DUT.CPU = &v1alpha1.DUTCPUSource{Cgroup: "/system.slice/dut.service"}
		}
		p, err := plan.Resolve(tt, nil)
		if err != nil {
			t.Fatal(err)
		}
		pods, err := Pods(tt, p, "h", Options{Image: "img"})
		if err != nil {
			t.Fatal(err)
		}
		if len(pods) != len(c.want) {
			t.Fatalf("%s: %d pods", c.name, len(pods))
		}
		for _, pod := range pods {
			role := pod.Labels[LabelRole]
			var vol *corev1.Volume
			for i := range pod.Spec.Volumes {
				if hp := pod.Spec.Volumes[i].HostPath; hp != nil && hp.Path == "/sys/fs/cgroup" {
					vol = &pod.Spec.Volumes[i]
				}
			}
			mounted := false
			for _, m := range pod.Spec.Containers[0].VolumeMounts {
				if vol != nil && m.Name == vol.Name {
					mounted = m.MountPath == cgroupcpu.NodeMount && m.ReadOnly
				}
			}
			if want := c.want[role]; (vol != nil) != want || mounted != want {
				t.Errorf("%s: pod %s mounts the node's cgroups: volume %v, read-only at %s %v; want %v", c.name, role, vol != nil, cgroupcpu.NodeMount, mounted, want)
			}
		}
	}
}
