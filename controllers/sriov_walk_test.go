package controllers

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/engine"
	"linerate.dev/linerate/internal/plan"
)

// The SR-IOV walk of docs/testbed.md, as its samples make it: the namespace the tests run in, and per way of
// handing the tester its VFs (the SR-IOV Network Operator, the plain device plugin) the networks it makes,
// each with the device plugin resource, the PF, the VLAN and the PF's MTU behind it. walkProblems then says
// what about a rendered TrafficTest sample the walk would not carry: a network or resource it never makes, a
// page size it never reserves, a frame its PFs refuse, flows that land on one queue of a multi-queue VF.

// testbedPage is the page that walks a cluster admin from bare nodes to a first result.
var testbedPage = filepath.Join("..", "docs", "testbed.md")

// untaggedMaxFrame is the largest frame (FCS included) a PF at the default MTU of 1500 passes to its VFs.
const untaggedMaxFrame = 1518

type sriovNetwork struct {
	namespace, resource, pf string
	vlan                    int
	// pfMTU is the MTU the walk gives the network's PF in a sample; 0 where it sets it on the host, outside
	// any sample a test can read (the device plugin path's unit file).
	pfMTU int
}

type sriovWalk struct {
	name string
	// testNamespace is where the walk's networks are, and so where its tests must run; namespaceLabels are
	// the labels the walk's Namespace sample gives it (its Pod Security level).
	testNamespace   string
	namespaceLabels map[string]string
	networks        map[string]sriovNetwork
}

// sampleDocs reads every YAML document of a file under config/samples as a generic object.
func sampleDocs(t *testing.T, file string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "config", "samples", file))
	if err != nil {
		t.Error(err)
		return nil
	}
	var out []map[string]any
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if m != nil {
			out = append(out, m)
		}
	}
	return out
}

// field reads a nested field of a generic object ("" or nil when it is not there).
func field(m map[string]any, path ...string) any {
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[p]
	}
	return v
}

func str(m map[string]any, path ...string) string {
	s, _ := field(m, path...).(string)
	return s
}

func integer(m map[string]any, path ...string) int {
	f, _ := field(m, path...).(float64)
	return int(f)
}

func labelsOf(m map[string]any) map[string]string {
	out := map[string]string{}
	ls, _ := field(m, "metadata", "labels").(map[string]any)
	for k, v := range ls {
		out[k], _ = v.(string)
	}
	return out
}

// privilegedNamespace reads a Namespace sample; Pod Security admission's baseline and restricted levels
// refuse the capabilities the pods there need (the tester's IPC_LOCK and SYS_NICE, the SR-IOV operator's
// privileged daemons).
func privilegedNamespace(t *testing.T, file string) (name string, labels map[string]string) {
	t.Helper()
	docs := sampleDocs(t, file)
	if len(docs) != 1 || str(docs[0], "kind") != "Namespace" {
		t.Errorf("%s: want one Namespace, got %d documents", file, len(docs))
		return "", nil
	}
	labels = labelsOf(docs[0])
	if labels["pod-security.kubernetes.io/enforce"] != "privileged" {
		t.Errorf("%s: namespace %s has labels %v, want pod-security.kubernetes.io/enforce: privileged", file, str(docs[0], "metadata", "name"), labels)
	}
	return str(docs[0], "metadata", "name"), labels
}

// operatorWalk reads the SR-IOV Network Operator's samples: its chart values (the 82599 admitted, the
// resource prefix), a SriovNetworkNodePolicy per PF and a SriovNetwork per port.
func operatorWalk(t *testing.T, w sriovWalk) sriovWalk {
	t.Helper()
	privilegedNamespace(t, "sriov/operator/namespace.yaml")
	values := sampleDocs(t, "sriov/operator/chart-values.yaml")
	prefix, admitted := "openshift.io", map[string]string{} // the chart's default prefix; PF device -> VF device
	if len(values) == 1 {
		if p := str(values[0], "operator", "resourcePrefix"); p != "" {
			prefix = p
		}
		if field(values[0], "sriovOperatorConfig", "deploy") != true {
			t.Errorf("chart-values.yaml: sriovOperatorConfig.deploy must be true: without the SriovOperatorConfig no config daemon runs and no policy is applied")
		}
		extra, _ := field(values[0], "supportedExtraNICs").([]any)
		for _, e := range extra {
			// "Name: \"<vendor> <PF device> <VF device>\""
			_, ids, _ := strings.Cut(fmt.Sprint(e), ":")
			if f := strings.Fields(strings.Trim(strings.TrimSpace(ids), `"`)); len(f) == 3 && f[0] == "8086" {
				admitted[f[1]] = f[2]
			}
		}
	}
	type policy struct {
		pf  string
		mtu int
	}
	policies := map[string]policy{}
	for _, p := range sampleDocs(t, "sriov/operator/policies.yaml") {
		name := str(p, "metadata", "name")
		pfs, _ := field(p, "spec", "nicSelector", "pfNames").([]any)
		dev := str(p, "spec", "nicSelector", "deviceID")
		if str(p, "kind") != "SriovNetworkNodePolicy" || str(p, "spec", "deviceType") != "vfio-pci" || str(p, "spec", "nicSelector", "vendor") != "8086" || len(pfs) != 1 {
			t.Errorf("policy %s: want Intel VFs (vendor 8086) of one PF, bound to vfio-pci: %v", name, field(p, "spec"))
			continue
		}
		if admitted[dev] != "10ed" {
			t.Errorf("policy %s: PF device %q is not among the 82599s chart-values.yaml admits with their VF 10ed (%v): the config daemon skips it", name, dev, admitted)
		}
		policies[str(p, "spec", "resourceName")] = policy{fmt.Sprint(pfs[0]), integer(p, "spec", "mtu")}
	}
	for _, n := range sampleDocs(t, "sriov/operator/networks.yaml") {
		name, res := str(n, "metadata", "name"), str(n, "spec", "resourceName")
		if str(n, "spec", "spoofChk") != "off" || str(n, "spec", "trust") != "on" {
			t.Errorf("SriovNetwork %s: want spoofChk off, trust on", name)
		}
		pol, ok := policies[res]
		if !ok {
			t.Errorf("SriovNetwork %s: resource %s has no SriovNetworkNodePolicy", name, res)
		}
		w.networks[name] = sriovNetwork{namespace: str(n, "spec", "networkNamespace"), resource: prefix + "/" + res, pf: pol.pf,
			vlan: integer(n, "spec", "vlan"), pfMTU: max(pol.mtu, 1500)}
	}
	return w
}

// devicePluginWalk reads the plain device plugin's samples: its sriovdp-config, one resource per PF, and a
// NetworkAttachmentDefinition per port for sriov-cni.
func devicePluginWalk(t *testing.T, w sriovWalk) sriovWalk {
	t.Helper()
	var conf struct {
		ResourceList []struct {
			ResourcePrefix string `json:"resourcePrefix"`
			ResourceName   string `json:"resourceName"`
			Selectors      struct {
				Vendors []string `json:"vendors"`
				Devices []string `json:"devices"`
				Drivers []string `json:"drivers"`
				PfNames []string `json:"pfNames"`
			} `json:"selectors"`
		} `json:"resourceList"`
	}
	if cm := sampleDocs(t, "sriov/device-plugin/configmap.yaml"); len(cm) == 1 {
		if err := json.Unmarshal([]byte(str(cm[0], "data", "config.json")), &conf); err != nil {
			t.Errorf("sriovdp-config config.json: %v", err)
		}
	}
	pfOf := map[string]string{}
	for _, r := range conf.ResourceList {
		s := r.Selectors
		if !slices.Equal(s.Vendors, []string{"8086"}) || !slices.Equal(s.Devices, []string{"10ed"}) || !slices.Equal(s.Drivers, []string{"vfio-pci"}) || len(s.PfNames) != 1 {
			t.Errorf("resource %s: want 82599 VFs (8086:10ed) on vfio-pci from one PF: %+v", r.ResourceName, s)
			continue
		}
		pfOf[r.ResourcePrefix+"/"+r.ResourceName] = s.PfNames[0]
	}
	for _, n := range sampleDocs(t, "sriov/device-plugin/networks.yaml") {
		name := str(n, "metadata", "name")
		var cni struct {
			Type     string `json:"type"`
			SpoofChk string `json:"spoofchk"`
			Trust    string `json:"trust"`
			VLAN     int    `json:"vlan"`
		}
		if err := json.Unmarshal([]byte(str(n, "spec", "config")), &cni); err != nil || cni.Type != "sriov" || cni.SpoofChk != "off" || cni.Trust != "on" {
			t.Errorf("NAD %s: want sriov-cni with spoofchk off, trust on: %+v %v", name, cni, err)
		}
		res := str(n, "metadata", "annotations", "k8s.v1.cni.cncf.io/resourceName")
		w.networks[name] = sriovNetwork{namespace: str(n, "metadata", "namespace"), resource: res, pf: pfOf[res], vlan: cni.VLAN}
	}
	return w
}

// sriovWalks reads both ways of the walk, and checks what each holds on its own.
func sriovWalks(t *testing.T) []sriovWalk {
	t.Helper()
	ns, labels := privilegedNamespace(t, "sriov/namespace.yaml")
	var out []sriovWalk
	for name, read := range map[string]func(*testing.T, sriovWalk) sriovWalk{"operator": operatorWalk, "device-plugin": devicePluginWalk} {
		w := read(t, sriovWalk{name: name, testNamespace: ns, namespaceLabels: labels, networks: map[string]sriovNetwork{}})
		pfs := map[string]bool{}
		for n, net := range w.networks {
			if net.namespace != ns {
				t.Errorf("%s: network %s is made in namespace %q, the walk's tests run in %q (sriov/namespace.yaml)", name, n, net.namespace, ns)
			}
			pfs[net.pf] = true
		}
		if len(w.networks) < 2 || len(pfs) != len(w.networks) || pfs[""] {
			t.Errorf("%s: want a network per port, each on its own PF: %+v", name, w.networks)
		}
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b sriovWalk) int { return strings.Compare(a.name, b.name) })
	return out
}

// reservedPageSize is the hugepage size the walk reserves on the kernel command line (docs/testbed.md's
// hugepagesz=), as the kubelet names its resource: 1G -> 1Gi.
func reservedPageSize(t *testing.T) string {
	t.Helper()
	page, err := os.ReadFile(testbedPage)
	if err != nil {
		t.Fatalf("the walk's page: %v", err)
	}
	sizes := map[string]bool{}
	for _, m := range regexp.MustCompile(`hugepagesz=(\d+[GM])\b`).FindAllStringSubmatch(string(page), -1) {
		sizes[m[1]+"i"] = true
	}
	if len(sizes) != 1 {
		t.Fatalf("%s reserves hugepages of sizes %v: want one size the samples can ask for", testbedPage, sizes)
	}
	for s := range sizes {
		return s
	}
	return ""
}

// walkProblems says what about a TrafficTest sample, as the operator rendered it (its plan and tester pod),
// the walk w would not carry. sampleNamespace is the namespace the sample names (the test ran elsewhere).
func walkProblems(w sriovWalk, sampleNamespace string, p *plan.Plan, pod *corev1.Pod, pageSize string) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	if sampleNamespace != w.testNamespace {
		add("metadata.namespace %q: the walk's networks are in namespace %q", sampleNamespace, w.testNamespace)
	}
	c := pod.Spec.Containers[0]
	if pod.Status.QOSClass != corev1.PodQOSGuaranteed {
		add("QoS class %s: the static CPU manager gives exclusive cores only to Guaranteed pods (set tester.cpus)", pod.Status.QOSClass)
	}
	for name, q := range c.Resources.Limits {
		if strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) && name != corev1.ResourceName(corev1.ResourceHugePagesPrefix+pageSize) {
			add("the pod asks for %s %s, the walk reserves only %s pages: it would stay Pending (tester.hugePageSize: %s)", q.String(), name, pageSize, pageSize)
		}
	}
	pfs := map[string]bool{}
	largest := p.LargestFrame()
	for _, port := range p.Ports {
		if port.Driver != v1alpha1.DriverVFIO {
			add("port %s: driver %s, the walk hands the tester VFs bound to vfio-pci", port.Name, port.Driver)
			continue
		}
		n, ok := w.networks[port.Network]
		if !ok {
			add("port %s: network %q is not one the walk makes (%v)", port.Name, port.Network, slices.Sorted(maps.Keys(w.networks)))
			continue
		}
		if n.resource != port.Resource {
			add("port %s: resource %q, but network %s carries VFs of %q", port.Name, port.Resource, port.Network, n.resource)
		}
		if q := c.Resources.Limits[corev1.ResourceName(port.Resource)]; q.Value() != 1 {
			add("port %s: the pod asks for %s VFs of %s, want one", port.Name, q.String(), port.Resource)
		}
		pfs[n.pf] = true
		if p.Traffic.VLAN > 0 && n.vlan > 0 {
			add("port %s: traffic.vlan %d and network %s's vlan %d: the VF would tag what its PF tags again; set one of them", port.Name, p.Traffic.VLAN, port.Network, n.vlan)
		}
		tag := 0
		if p.Traffic.VLAN > 0 {
			tag = 4
		}
		if n.pfMTU > 0 && largest > untaggedMaxFrame && largest > n.pfMTU+18+tag {
			add("port %s: frames up to %d B, but the walk leaves PF %s at MTU %d (%d B frames): set the policy's mtu to %d or more",
				port.Name, largest, n.pf, n.pfMTU, n.pfMTU+18+tag, largest-18-tag)
		}
	}
	if len(p.Ports) == 2 && len(pfs) != 2 {
		add("the two ports take VFs of one PF (%v): a port's VF should be its own PF's", pfs)
	}
	// an 82599 VF's RSS is its PF's, which hashes IPv4 UDP on the addresses only: flows that differ only in
	// their ports all land on one RX queue, and the other queues' workers receive nothing
	_, queues := engine.WorkerLayout(int(c.Resources.Requests.Cpu().Value()), podPorts(p))
	variesIP := slices.ContainsFunc(p.Traffic.Vary, func(f string) bool { return f == "srcIP" || f == "dstIP" })
	if queues > 1 && p.Traffic.Flows > 1 && !variesIP {
		add("traffic.vary %v: each VF port receives on %d queues, and an 82599 PF hashes IPv4 UDP on the addresses only: vary srcIP or dstIP", p.Traffic.Vary, queues)
	}
	return out
}

// podPorts is how many ports one tester pod drives: both, unless they are pinned to two nodes.
func podPorts(p *plan.Plan) int {
	if len(p.Ports) == 2 && p.Ports[0].Node != p.Ports[1].Node {
		return 1
	}
	return len(p.Ports)
}
