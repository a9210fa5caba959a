package controllers

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/results"
	"linerate.dev/linerate/internal/tester"
)

// renderedSample is a TrafficTest sample as the operator renders it against a real API server.
type renderedSample struct {
	// namespace is the one the sample names; it was rendered in a fresh namespace with the same labels
	namespace string
	plan      *plan.Plan
	pod       *corev1.Pod
}

// render creates tt, and the ImixProfiles beside it, in a fresh namespace labelled as labels say (the walk's
// Namespace sample: its Pod Security level), and waits for the operator's plan and tester pod.
func render(t *testing.T, tt *v1alpha1.TrafficTest, labels map[string]string, profiles []*v1alpha1.ImixProfile) renderedSample {
	t.Helper()
	ctx := context.Background()
	out := renderedSample{namespace: tt.Namespace}
	ns := labelledNamespace(t, labels)
	for _, p := range profiles {
		p = p.DeepCopy()
		p.Namespace = ns
		if err := k8sClient.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	tt = newTest(t, ns, tt.Name, tt.DeepCopy())
	out.pod = waitPod(t, ns, tester.PodName(tt, tester.RoleTester))
	cm := &corev1.ConfigMap{}
	eventually(t, "the plan of "+tt.Name, func() (bool, string) {
		err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: results.PlanConfigMapName(tt.Name)}, cm)
		return err == nil, "plan ConfigMap: " + errString(err)
	})
	var err error
	if out.plan, err = plan.Unmarshal([]byte(cm.Data[plan.ConfigMapKey])); err != nil {
		t.Fatal(err)
	}
	return out
}

// labelledNamespace makes a fresh namespace with labels.
func labelledNamespace(t *testing.T, labels map[string]string) string {
	t.Helper()
	ns := namespace(t)
	nsObj := &corev1.Namespace{}
	if err := k8sClient.Get(context.Background(), client.ObjectKey{Name: ns}, nsObj); err != nil {
		t.Fatal(err)
	}
	nsObj.Labels = labels
	if err := k8sClient.Update(context.Background(), nsObj); err != nil {
		t.Fatal(err)
	}
	return ns
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// sampleTest reads a TrafficTest sample under config/samples as the API would.
func sampleTest(t *testing.T, file string) *v1alpha1.TrafficTest {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "config", "samples", file))
	if err != nil {
		t.Fatal(err)
	}
	tt := &v1alpha1.TrafficTest{}
	if err := yaml.UnmarshalStrict(data, tt); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return tt
}

// vfSamples reads the TrafficTests of config/samples/*.yaml (a schedule's template as the test it makes)
// whose ports are VFs, with the ImixProfiles beside them; the demo's af_packet test is not the walk's.
func vfSamples(t *testing.T) (tests map[string]*v1alpha1.TrafficTest, profiles []*v1alpha1.ImixProfile) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "config", "samples", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tests = map[string]*v1alpha1.TrafficTest{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(data), "\n---\n") {
			var meta metav1.TypeMeta
			if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			var tt *v1alpha1.TrafficTest
			switch meta.Kind {
			case "ImixProfile":
				p := &v1alpha1.ImixProfile{}
				if err := yaml.UnmarshalStrict([]byte(doc), p); err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				profiles = append(profiles, p)
			case "TrafficTest":
				tt = &v1alpha1.TrafficTest{}
				if err := yaml.UnmarshalStrict([]byte(doc), tt); err != nil {
					t.Fatalf("%s: %v", f, err)
				}
			case "TrafficTestSchedule":
				s := &v1alpha1.TrafficTestSchedule{}
				if err := yaml.UnmarshalStrict([]byte(doc), s); err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				tt = &v1alpha1.TrafficTest{ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace}, Spec: s.Spec.Template.Spec}
			}
			if tt != nil && !slices.ContainsFunc(tt.Spec.Ports, func(p v1alpha1.PortSpec) bool { return p.Driver != "" && p.Driver != v1alpha1.DriverVFIO }) {
				tests[filepath.Base(f)] = tt
			}
		}
	}
	if len(tests) < 3 {
		t.Fatalf("VF samples: %v, want throughput-test.yaml, imix-test.yaml and nightly-schedule.yaml at least", slices.Sorted(maps.Keys(tests)))
	}
	// the whole TrafficTests the README and the docs show are copied and applied as they stand too
	docs, err := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append([]string{filepath.Join("..", "README.md")}, docs...) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, block := range yamlBlocks(string(data)) {
			var meta metav1.TypeMeta
			if yaml.Unmarshal([]byte(block), &meta) != nil || meta.Kind != "TrafficTest" {
				continue
			}
			tt := &v1alpha1.TrafficTest{}
			if err := yaml.UnmarshalStrict([]byte(block), tt); err != nil {
				t.Fatalf("%s, YAML block %d: %v", f, i+1, err)
			}
			if !slices.ContainsFunc(tt.Spec.Ports, func(p v1alpha1.PortSpec) bool { return p.Driver != "" && p.Driver != v1alpha1.DriverVFIO }) {
				tests[fmt.Sprintf("%s block %d", strings.TrimPrefix(f, "../"), i+1)] = tt
			}
		}
	}
	return tests, profiles
}

// yamlBlocks is the text of each ```yaml fence of a Markdown page, in order.
func yamlBlocks(md string) []string {
	var blocks []string
	var cur []string
	in := false
	for _, line := range strings.Split(md, "\n") {
		switch trimmed := strings.TrimSpace(line); {
		case !in && trimmed == "```yaml":
			in, cur = true, nil
		case in && trimmed == "```":
			in = false
			blocks = append(blocks, strings.Join(cur, "\n"))
		case in:
			cur = append(cur, line)
		}
	}
	return blocks
}

// The SR-IOV samples hold together as a cluster admin applies them along docs/testbed.md: each way's objects
// make a network per port in the tests' namespace, on a PF of its own, bound to vfio-pci, with spoof check
// off and trust on; the 82599 is admitted to the SR-IOV Network Operator. And each way's TrafficTest, made
// by the operator against a real API server in a namespace labelled as the walk's, is a Guaranteed pod
// asking one VF of each network's resource and the page size the walk reserves, whose flows spread over its
// VFs' queues and whose frames its PFs carry.
func TestSRIOVSamplesHoldTogether(t *testing.T) {
	walks := sriovWalks(t)
	pageSize := reservedPageSize(t)
	startManager(t)
	for _, w := range walks {
		t.Run(w.name, func(t *testing.T) {
			tt := sampleTest(t, "sriov/"+w.name+"/traffictest.yaml")
			r := render(t, tt, w.namespaceLabels, nil)
			for _, p := range walkProblems(w, r.namespace, r.plan, r.pod, pageSize) {
				t.Errorf("sriov/%s/traffictest.yaml: %s", w.name, p)
			}
			checkNetworkStatusFile(t, r.pod)
		})
	}
}

// The samples at the top of config/samples that drive VFs (the one README.md runs, the IMIX test, the nightly
// schedule) run on what the SR-IOV walk makes, whichever way it went: its networks, resources, page size and
// namespace. Otherwise the pod of a newcomer's first apply stays Pending.
func TestSamplesFollowTheSRIOVWalk(t *testing.T) {
	walks := sriovWalks(t)
	pageSize := reservedPageSize(t)
	tests, profiles := vfSamples(t)
	for _, p := range profiles {
		if p.Namespace != walks[0].testNamespace {
			t.Errorf("ImixProfile %s: namespace %q, the tests that use it run in %q", p.Name, p.Namespace, walks[0].testNamespace)
		}
	}
	startManager(t)
	for file, tt := range tests {
		t.Run(file, func(t *testing.T) {
			r := render(t, tt, walks[0].namespaceLabels, profiles)
			for _, w := range walks {
				for _, p := range walkProblems(w, r.namespace, r.plan, r.pod, pageSize) {
					t.Errorf("%s, %s way: %s", file, w.name, p)
				}
			}
		})
	}
}

// What walkProblems catches, each a test that would stay Pending, be refused, or measure the tester: the
// SR-IOV operator sample made wrong one way at a time (and the walk with it, for what the walk decides).
func TestSRIOVWalkChecksCatchWhatWouldStrandATest(t *testing.T) {
	walks := sriovWalks(t)
	pageSize := reservedPageSize(t)
	var operator sriovWalk
	for _, w := range walks {
		if w.name == "operator" {
			operator = w
		}
	}
	startManager(t)
	for _, c := range []struct {
		name   string
		edit   func(*v1alpha1.TrafficTest, map[string]sriovNetwork)
		want   string // "" : no problem
		wantNo string // a problem that must not be reported
	}{
		{"as written", func(*v1alpha1.TrafficTest, map[string]sriovNetwork) {}, "", ""},
		{"2 MiB pages where the walk reserves 1 GiB", func(tt *v1alpha1.TrafficTest, _ map[string]sriovNetwork) { tt.Spec.Tester.HugePageSize = "2Mi" },
			"it would stay Pending", ""},
		{"flows that vary only UDP ports", func(tt *v1alpha1.TrafficTest, _ map[string]sriovNetwork) {
			tt.Spec.Traffic.Vary = []v1alpha1.FlowField{"srcPort", "dstPort"}
		}, "vary srcIP or dstIP", ""},
		{"a network the walk does not make", func(tt *v1alpha1.TrafficTest, _ map[string]sriovNetwork) { tt.Spec.Ports[0].Network = "sriov-west" },
			`network "sriov-west" is not one the walk makes`, ""},
		{"another namespace", func(tt *v1alpha1.TrafficTest, _ map[string]sriovNetwork) { tt.Namespace = "default" }, `metadata.namespace "default"`, ""},
		{"9018 B frames through PFs at MTU 1500", jumboThroughPFsAt(1500), "set the policy's mtu to 9000 or more", ""},
		{"9018 B frames through PFs at MTU 9000", jumboThroughPFsAt(9000), "", "mtu"},
		{"a VLAN the VF tags and its PF tags again", func(tt *v1alpha1.TrafficTest, nets map[string]sriovNetwork) {
			vlan := int32(100)
			tt.Spec.Traffic.VLAN = &vlan
			tt.Spec.FrameSizes = []int32{68, 512, 1518} // a tagged frame is at least 68 B
			for n, net := range nets {
				net.vlan = 100
				nets[n] = net
			}
		}, "the VF would tag what its PF tags again", ""},
		{"both ports on one PF", func(tt *v1alpha1.TrafficTest, _ map[string]sriovNetwork) {
			tt.Spec.Ports[1].Network, tt.Spec.Ports[1].Resource = tt.Spec.Ports[0].Network, tt.Spec.Ports[0].Resource
		}, "the two ports take VFs of one PF", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			tt := sampleTest(t, "sriov/operator/traffictest.yaml")
			w := operator
			w.networks = map[string]sriovNetwork{}
			for n, net := range operator.networks {
				w.networks[n] = net
			}
			c.edit(tt, w.networks)
			r := render(t, tt, w.namespaceLabels, nil)
			got := strings.Join(walkProblems(w, r.namespace, r.plan, r.pod, pageSize), "\n")
			switch {
			case c.want == "" && c.wantNo == "" && got != "":
				t.Errorf("problems with the sample as written:\n%s", got)
			case c.want != "" && !strings.Contains(got, c.want):
				t.Errorf("want a problem saying %q, got:\n%s", c.want, got)
			case c.wantNo != "" && strings.Contains(got, c.wantNo):
				t.Errorf("want no problem about %q, got:\n%s", c.wantNo, got)
			}
		})
	}
}

// jumboThroughPFsAt makes a test of 9018 B frames (a 9000 B MTU's largest, which its DUT accepts) through
// PFs the walk leaves at mtu.
func jumboThroughPFsAt(mtu int) func(*v1alpha1.TrafficTest, map[string]sriovNetwork) {
	return func(tt *v1alpha1.TrafficTest, nets map[string]sriovNetwork) {
		largest := int32(9018)
		tt.Spec.FrameSizes = []int32{64, largest}
		tt.Spec.DUT.MaxFrameSize = &largest
		for n, net := range nets {
			net.pfMTU = mtu
			nets[n] = net
		}
	}
}

// The walk's Namespace sample admits the tester pod; a namespace where Pod Security admission enforces
// baseline refuses it, for the capabilities DPDK needs (docs/testbed.md says so: this is the real
// kube-apiserver's PodSecurity admission saying it).
func TestSRIOVSampleNamespaceAdmitsTheTesterBaselineDoesNot(t *testing.T) {
	walks := sriovWalks(t)
	startManager(t)
	r := render(t, sampleTest(t, "sriov/operator/traffictest.yaml"), walks[0].namespaceLabels, nil)

	ctx := context.Background()
	ns := labelledNamespace(t, map[string]string{"pod-security.kubernetes.io/enforce": "baseline"})
	if err := k8sClient.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: r.pod.Spec.ServiceAccountName}}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: r.pod.Name}, Spec: *r.pod.Spec.DeepCopy()}
	err := k8sClient.Create(ctx, pod, client.DryRunAll)
	if !apierrors.IsForbidden(err) || !strings.Contains(errString(err), "IPC_LOCK") {
		t.Fatalf("the tester pod in a namespace enforcing Pod Security baseline: %v; want it refused for IPC_LOCK", err)
	}
	t.Logf("refused, as docs/testbed.md says: %v", err)
}
