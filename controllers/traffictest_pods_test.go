package controllers

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/tester"
)

func TestTesterPodIsRenderedForDPDK(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	newTest(t, ns, "gw", sriovTest())
	pod := waitPod(t, ns, "gw-tester")
	ctx := context.Background()

	c := pod.Spec.Containers[0]
	cpu, mem, huge := c.Resources.Limits.Cpu(), c.Resources.Limits.Memory(), c.Resources.Limits[corev1.ResourceName("hugepages-2Mi")]
	// memory: 1Gi and the sequence windows of the two directions it receives, a bit per frame of the
	// longest trial (2 s + 1 s warm-up + 2 s drain + 1 s) at 10 GbE: 2 x 89.3 M bits = 22 MiB (rounded up)
	if cpu.Value() != 4 || mem.String() != "1046Mi" || huge.String() != "2Gi" {
		t.Errorf("limits: cpu %s memory %s hugepages %s", cpu, mem, huge.String())
	}
	for name, q := range c.Resources.Limits {
		if r := c.Resources.Requests[name]; r.Cmp(q) != 0 {
			t.Errorf("requests must equal limits for Guaranteed QoS: %s request %s limit %s", name, r.String(), q.String())
		}
	}
	if vf := c.Resources.Limits[corev1.ResourceName("intel.com/sriov_82599")]; vf.Value() != 2 {
		t.Errorf("SR-IOV resource: want 2 VFs, got %s", vf.String())
	}
	var nets []map[string]string
	if err := json.Unmarshal([]byte(pod.Annotations[tester.NetworksAnnotation]), &nets); err != nil || len(nets) != 2 || nets[0]["name"] != "sriov-west" ||
		nets[0]["interface"] != "net1" || nets[1]["interface"] != "net2" {
		t.Errorf("multus annotation (each VF port's attachment named, to find it in network-status): %q (%v)", pod.Annotations[tester.NetworksAnnotation], err)
	}
	checkNetworkStatusFile(t, pod)
	// a private registry's image is pulled with the Secret the manager was given
	if len(pod.Spec.ImagePullSecrets) != 1 || pod.Spec.ImagePullSecrets[0].Name != "regcred" {
		t.Errorf("imagePullSecrets %v, want the manager's [regcred]", pod.Spec.ImagePullSecrets)
	}
	caps := c.SecurityContext.Capabilities
	if len(caps.Add) != 2 || caps.Add[0] != "IPC_LOCK" || caps.Add[1] != "SYS_NICE" || len(caps.Drop) != 1 || caps.Drop[0] != "ALL" {
		t.Errorf("capabilities: want only IPC_LOCK and SYS_NICE for vfio-pci ports, got %+v", caps)
	}
	var hugeVol bool
	for _, v := range pod.Spec.Volumes {
		if v.EmptyDir != nil && v.EmptyDir.Medium == "HugePages-2Mi" {
			hugeVol = true
		}
	}
	if !hugeVol || pod.Spec.RestartPolicy != corev1.RestartPolicyNever || pod.Spec.ServiceAccountName != "gw-tester" {
		t.Errorf("pod spec: hugepages volume %v, restartPolicy %s, serviceAccount %s", hugeVol, pod.Spec.RestartPolicy, pod.Spec.ServiceAccountName)
	}
	if len(pod.OwnerReferences) != 1 || pod.OwnerReferences[0].Kind != "TrafficTest" || pod.Labels[tester.LabelTest] != "gw" {
		t.Errorf("owner/labels: %+v %+v", pod.OwnerReferences, pod.Labels)
	}

	planCM := &corev1.ConfigMap{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "gw-plan"}, planCM); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Unmarshal([]byte(planCM.Data[plan.ConfigMapKey]))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.FrameSizes) != 2 || p.FrameSizes[1] != 1518 || p.Durations.ValidationTrial != 2*time.Second || p.Ports[0].Gateway != "198.18.1.1" {
		t.Errorf("plan: %+v", p)
	}

	role := &rbacv1.Role{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "gw-tester"}, role); err != nil {
		t.Fatal(err)
	}
	for _, rule := range role.Rules {
		if len(rule.ResourceNames) == 0 {
			t.Errorf("tester role must be limited by resourceNames: %+v", rule)
		}
		for _, n := range rule.ResourceNames {
			if !strings.HasPrefix(n, "gw-") {
				t.Errorf("tester role reaches %s, not an object of its test", n)
			}
		}
		for _, v := range rule.Verbs {
			if v == "create" || v == "delete" || v == "list" {
				t.Errorf("tester role grants %s", v)
			}
		}
	}
	tt := waitTest(t, ns, "gw", "Pending with PlanReady", func(tt *v1alpha1.TrafficTest) bool {
		c := condition(tt, v1alpha1.ConditionPlanReady)
		return tt.Status.Phase == v1alpha1.PhasePending && c != nil && c.Status == metav1.ConditionTrue
	})
	if tt.Status.ObservedGeneration != tt.Generation || condition(tt, v1alpha1.ConditionPlanReady).ObservedGeneration != tt.Generation {
		t.Errorf("observedGeneration not set: %+v", tt.Status)
	}
	if tt.Status.ResultsConfigMap != "gw-results" || tt.Status.StartTime == nil {
		t.Errorf("status: %+v", tt.Status)
	}
}

func TestAFPacketPortsGetNetRaw(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	newTest(t, ns, "veth", sriovTest(withPorts(
		v1alpha1.PortSpec{Name: "a", Driver: v1alpha1.DriverAFPacket, Network: "macvlan-a"},
		v1alpha1.PortSpec{Name: "b", Driver: v1alpha1.DriverAFPacket, Network: "kube-system/macvlan-b"})))
	pod := waitPod(t, ns, "veth-tester")
	caps := pod.Spec.Containers[0].SecurityContext.Capabilities.Add
	if len(caps) != 4 || caps[0] != "IPC_LOCK" || caps[1] != "NET_ADMIN" || caps[2] != "NET_RAW" || caps[3] != "SYS_NICE" {
		t.Errorf("af_packet ports need IPC_LOCK, NET_ADMIN, NET_RAW and SYS_NICE, got %v", caps)
	}
	if !strings.Contains(pod.Annotations[tester.NetworksAnnotation], `"namespace":"kube-system"`) ||
		!strings.Contains(pod.Annotations[tester.NetworksAnnotation], `"interface":"net2"`) {
		t.Errorf("multus annotation: %s", pod.Annotations[tester.NetworksAnnotation])
	}
}

func TestPortsOnTwoNodesMakeGeneratorAndReceiver(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	newTest(t, ns, "split", sriovTest(withPorts(
		v1alpha1.PortSpec{Name: "west", Resource: "intel.com/vf", Node: "node-a"},
		v1alpha1.PortSpec{Name: "east", Resource: "intel.com/vf", Node: "node-b"})))
	gen := waitPod(t, ns, "split-generator")
	rcv := waitPod(t, ns, "split-receiver")
	if gen.Spec.NodeSelector[corev1.LabelHostname] != "node-a" || rcv.Spec.NodeSelector[corev1.LabelHostname] != "node-b" {
		t.Errorf("placement: %v / %v", gen.Spec.NodeSelector, rcv.Spec.NodeSelector)
	}
	if q := rcv.Spec.Containers[0].Resources.Limits[corev1.ResourceName("intel.com/vf")]; q.Value() != 1 {
		t.Errorf("receiver VFs: %s", q.String())
	}
	svc := &corev1.Service{}
	if err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "split-receiver"}, svc); err != nil {
		t.Fatalf("receiver service: %v", err)
	}
	if !strings.Contains(strings.Join(gen.Spec.Containers[0].Args, " "), "--remote-engine east=tcp:split-receiver."+ns+".svc:7777") {
		t.Errorf("generator args: %v", gen.Spec.Containers[0].Args)
	}
}

// checkNetworkStatusFile checks that the tester reads which VF is whose from Multus' network-status,
// mounted through the downward API and named to the runner.
func checkNetworkStatusFile(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	c := pod.Spec.Containers[0]
	var statusFile string
	for _, v := range pod.Spec.Volumes {
		if v.DownwardAPI != nil && len(v.DownwardAPI.Items) == 1 && v.DownwardAPI.Items[0].FieldRef != nil &&
			v.DownwardAPI.Items[0].FieldRef.FieldPath == "metadata.annotations['k8s.v1.cni.cncf.io/network-status']" {
			for _, m := range c.VolumeMounts {
				if m.Name == v.Name {
					statusFile = m.MountPath + "/" + v.DownwardAPI.Items[0].Path
				}
			}
		}
	}
	if statusFile == "" || !strings.Contains(strings.Join(c.Args, " "), "--network-status "+statusFile) {
		t.Errorf("network-status file %q, args %v", statusFile, c.Args)
	}
}
