package controllers

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"linerate.dev/linerate/api/v1alpha1"
)

// sampleDocs reads every YAML document of a file under config/samples/sriov as a generic object.
func sampleDocs(t *testing.T, file string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "config", "samples", "sriov", file))
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		out = append(out, m)
	}
	return out
}

func str(m map[string]any, path ...string) string {
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = mm[p]
	}
	s, _ := v.(string)
	return s
}

// sampleTest reads a sample TrafficTest as the API would.
func sampleTest(t *testing.T, file string) *v1alpha1.TrafficTest {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "config", "samples", "sriov", file))
	if err != nil {
		t.Fatal(err)
	}
	tt := &v1alpha1.TrafficTest{}
	if err := yaml.UnmarshalStrict(data, tt); err != nil {
		t.Fatal(err)
	}
	return tt
}

// The SR-IOV samples hold together as a cluster admin applies them: each port's network is one the samples
// make, carries the port's resource, from a VF pool of its own PF bound to vfio-pci, with spoof check off
// and trust on; the 82599 is admitted to the SR-IOV Network Operator; the pages asked for are the ones the
// README reserves. And the TrafficTest, made by the
// operator against a real API server, is a Guaranteed pod asking one VF of each resource.
func TestSRIOVSamplesHoldTogether(t *testing.T) {
	type network struct{ resource, namespace, pf string }
	ways := map[string]map[string]network{"operator": {}, "device-plugin": {}}

	// SR-IOV Network Operator: policy per PF, SriovNetwork per port, default prefix openshift.io
	pfOf := map[string]string{}
	for _, p := range sampleDocs(t, "operator/policies.yaml") {
		spec := p["spec"].(map[string]any)
		sel := spec["nicSelector"].(map[string]any)
		if str(p, "kind") != "SriovNetworkNodePolicy" || str(spec, "deviceType") != "vfio-pci" || str(sel, "vendor") != "8086" || str(sel, "deviceID") != "10fb" {
			t.Errorf("policy %s: want an 82599 PF (8086:10fb) with vfio-pci VFs: %v", str(p, "metadata", "name"), spec)
		}
		pfOf[str(spec, "resourceName")] = sel["pfNames"].([]any)[0].(string)
	}
	for _, n := range sampleDocs(t, "operator/networks.yaml") {
		if str(n, "spec", "spoofChk") != "off" || str(n, "spec", "trust") != "on" {
			t.Errorf("SriovNetwork %s: want spoofChk off, trust on", str(n, "metadata", "name"))
		}
		res := str(n, "spec", "resourceName")
		ways["operator"][str(n, "metadata", "name")] = network{"openshift.io/" + res, str(n, "spec", "networkNamespace"), pfOf[res]}
	}
	extra, err := os.ReadFile(filepath.Join("..", "config", "samples", "sriov", "operator", "supported-nics-values.yaml"))
	if err != nil || !strings.Contains(string(extra), `"8086 10fb 10ed"`) {
		t.Errorf("supportedExtraNICs must admit the 82599 (8086 10fb 10ed): %s %v", extra, err)
	}

	// device plugin: config.json per PF, NetworkAttachmentDefinition per port
	cm := sampleDocs(t, "device-plugin/configmap.yaml")[0]
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
	if err := json.Unmarshal([]byte(str(cm, "data", "config.json")), &conf); err != nil {
		t.Fatalf("sriovdp-config config.json: %v", err)
	}
	dpPF := map[string]string{}
	for _, r := range conf.ResourceList {
		s := r.Selectors
		if !slices.Equal(s.Vendors, []string{"8086"}) || !slices.Equal(s.Devices, []string{"10ed"}) || !slices.Equal(s.Drivers, []string{"vfio-pci"}) || len(s.PfNames) != 1 {
			t.Errorf("resource %s: want 82599 VFs (8086:10ed) on vfio-pci from one PF: %+v", r.ResourceName, s)
		}
		dpPF[r.ResourcePrefix+"/"+r.ResourceName] = s.PfNames[0]
	}
	for _, n := range sampleDocs(t, "device-plugin/networks.yaml") {
		var cni map[string]any
		if err := json.Unmarshal([]byte(str(n, "spec", "config")), &cni); err != nil || cni["type"] != "sriov" || cni["spoofchk"] != "off" || cni["trust"] != "on" {
			t.Errorf("NAD %s: want sriov-cni with spoofchk off, trust on: %v %v", str(n, "metadata", "name"), cni, err)
		}
		res := str(n, "metadata", "annotations", "k8s.v1.cni.cncf.io/resourceName")
		ways["device-plugin"][str(n, "metadata", "name")] = network{res, str(n, "metadata", "namespace"), dpPF[res]}
	}

	startManager(t)
	for way, nets := range ways {
		t.Run(way, func(t *testing.T) {
			tt := sampleTest(t, way+"/traffictest.yaml")
			pfs := map[string]bool{}
			for _, p := range tt.Spec.Ports {
				n, ok := nets[p.Network]
				if !ok || n.resource != p.Resource || n.namespace != tt.Namespace || n.pf == "" {
					t.Errorf("port %s: network %q (%+v) must be made by the samples, in namespace %s, with resource %s from one PF",
						p.Name, p.Network, n, tt.Namespace, p.Resource)
				}
				pfs[n.pf] = true
			}
			if len(pfs) != 2 {
				t.Errorf("the two ports must take VFs from two PFs: %v", pfs)
			}
			ns := namespace(t)
			newTest(t, ns, "first-result", tt)
			pod := waitPod(t, ns, "first-result-tester")
			if pod.Status.QOSClass != corev1.PodQOSGuaranteed {
				t.Errorf("QoS class %s: the static CPU manager gives exclusive cores only to Guaranteed pods", pod.Status.QOSClass)
			}
			checkNetworkStatusFile(t, pod)
			c := pod.Spec.Containers[0]
			for _, p := range tt.Spec.Ports {
				if q := c.Resources.Limits[corev1.ResourceName(p.Resource)]; q.Value() != 1 {
					t.Errorf("port %s: %s limit %s, want one VF", p.Name, p.Resource, q.String())
				}
			}
			if cpu := c.Resources.Requests.Cpu(); cpu.Value() != 5 || cpu.MilliValue() != 5000 {
				t.Errorf("cpu request %s, want 5 whole CPUs", cpu)
			}
			// the README reserves 1 GiB pages (hugepagesz=1G): a request for 2 MiB pages would never schedule
			if q := c.Resources.Limits[corev1.ResourceName("hugepages-1Gi")]; q.String() != "2Gi" {
				t.Errorf("hugepages: %v, want 2Gi of the 1 GiB pages the README reserves", c.Resources.Limits)
			}
		})
	}
}
