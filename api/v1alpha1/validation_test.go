package v1alpha1_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/testenv"
)

// The API server itself must refuse bad specs with a message that names the field. These tests send
// specs to a real kube-apiserver with the generated CRDs installed.

var k8s client.Client

func TestMain(m *testing.M) {
	env, cfg, err := testenv.Start(filepath.Join("..", "..", "config", "crd", "bases"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "envtest:", err)
		os.Exit(1)
	}
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1alpha1.AddToScheme(scheme))
	if k8s, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "v"}}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	_ = env.Stop()
	os.Exit(code)
}

const validTest = `
apiVersion: linerate.dev/v1alpha1
kind: TrafficTest
metadata:
  namespace: v
spec:
  tests: [throughput, latency]
  frameSizes: [64, 1420, 1518]
  ports:
  - {name: west, network: sriov-west, resource: intel.com/sriov_82599}
  - {name: east, network: sriov-east, resource: intel.com/sriov_82599}
`

func parse(t *testing.T, doc string, name string) *v1alpha1.TrafficTest {
	t.Helper()
	tt := &v1alpha1.TrafficTest{}
	if err := yaml.UnmarshalStrict([]byte(doc), tt); err != nil {
		t.Fatal(err)
	}
	tt.Name = name
	return tt
}

func TestValidSpecIsAcceptedWithDefaults(t *testing.T) {
	tt := parse(t, validTest, "valid")
	if err := k8s.Create(context.Background(), tt); err != nil {
		t.Fatalf("a valid spec was refused: %v", err)
	}
	s := tt.Spec
	if s.Durations.ValidationTrial.Duration.String() != "1m0s" || s.Durations.Drain.Duration.String() != "2s" ||
		s.Durations.DUTRest.Duration.String() != "5s" {
		t.Errorf("duration defaults not applied: %+v", s.Durations)
	}
	if s.Throughput.LossTolerance != "0" || s.Throughput.Method != v1alpha1.SearchMultistage || s.Latency.Repetitions != 20 ||
		s.BackToBack.Repetitions != 50 || s.FrameLoss.Step != "10" {
		t.Errorf("search defaults not applied: %+v %+v %+v", s.Throughput, s.Latency, s.BackToBack)
	}
	if s.Traffic.Direction != v1alpha1.Bidirectional || s.Traffic.LineRate != "10G" || s.Traffic.IPVersion != 4 {
		t.Errorf("traffic defaults not applied: %+v", s.Traffic)
	}
	if s.Ports[0].Driver != v1alpha1.DriverVFIO || s.Tester.HugePageSize != "2Mi" || s.Tester.CPUs != 3 {
		t.Errorf("port/tester defaults not applied: %+v %+v", s.Ports[0], s.Tester)
	}
}

// One interface name on two nodes is two interfaces: a split test whose two pods each call their port
// net1 is accepted, and so are VF ports without a network, which use no interface (the refusal of one
// interface in one pod is in TestBadSpecsAreRefusedNamingTheField).
func TestOneInterfaceNameOnTwoNodesIsAccepted(t *testing.T) {
	doc := strings.Replace(validTest, `  - {name: west, network: sriov-west, resource: intel.com/sriov_82599}
  - {name: east, network: sriov-east, resource: intel.com/sriov_82599}`, `  - {name: west, driver: af_packet, interface: net1, node: a}
  - {name: east, driver: af_packet, interface: net1, node: b}`, 1)
	if doc == validTest {
		t.Fatal("the ports of validTest moved: the test no longer changes them")
	}
	if err := k8s.Create(context.Background(), parse(t, doc, "split-net1")); err != nil {
		t.Errorf("a split test with net1 on each node was refused: %v", err)
	}
	// a VF port without a network has no interface: the name is not used
	vfs := strings.Replace(validTest, `  - {name: west, network: sriov-west, resource: intel.com/sriov_82599}
  - {name: east, network: sriov-east, resource: intel.com/sriov_82599}`, `  - {name: west, resource: intel.com/sriov_82599, interface: net1}
  - {name: east, resource: intel.com/sriov_82599, interface: net1}`, 1)
	if err := k8s.Create(context.Background(), parse(t, vfs, "vfs-no-network")); err != nil {
		t.Errorf("VF ports without a network naming one interface were refused: %v", err)
	}
}

func TestBadSpecsAreRefusedNamingTheField(t *testing.T) {
	cases := []struct {
		name   string
		mutate string // YAML merged over spec
		want   string // substring of the API server's message
	}{
		{"frame size too small", `frameSizes: [32]`, "spec.frameSizes[0]"},
		{"clock bound of nothing", `tester: {maxClockOffset: 0s}`, "tester.maxClockOffset: give a bound above 0"},
		{"clock bound of an hour", `tester: {maxClockOffset: 1h}`, "tester.maxClockOffset: give a bound above 0"},
		{"a calibration without its ConfigMap", `tester: {calibration: {ceilingMargin: "3"}}`, "spec.tester.calibration.configMapName: Required value"},
		{"a ceiling margin of nothing", `tester: {calibration: {configMapName: testbed, ceilingMargin: "0"}}`, "tester.calibration.ceilingMargin must be more than 0 and less than 100"},
		{"a ceiling margin of all", `tester: {calibration: {configMapName: testbed, ceilingMargin: "100"}}`, "tester.calibration.ceilingMargin must be more than 0 and less than 100"},
		{"frame size too large", `frameSizes: [9217]`, "spec.frameSizes[0]"},
		{"a DUT cgroup up and out", `dut: {cpu: {cgroup: /system.slice/../../etc}}`, "spec.dut.cpu.cgroup: Invalid value: \"/system.slice/../../etc\": a cgroup path without '..'"},
		{"a DUT cgroup of nothing", `dut: {cpu: {cgroup: ""}}`, "spec.dut.cpu.cgroup"},
		{"a DUT cgroup and pod both", `dut: {cpu: {cgroup: /dut, pod: gw}}`, "dut.cpu: give either cgroup or pod, not both"},
		{"a DUT of no cores", `dut: {cpu: {cgroup: /dut, cores: "0"}}`, "dut.cpu.cores must be more than 0"},
		{"DUT cores in millicores", `dut: {cpu: {pod: gw, cores: 500m}}`, "spec.dut.cpu.cores"},
		{"frame size above DUT maximum", `{frameSizes: [64, 1600], dut: {maxFrameSize: 1526}}`, "frameSizes: every size must be at most dut.maxFrameSize"},
		{"ip packet size above DUT maximum", `{frameSizes: null, ipPacketSizes: [1500], dut: {maxFrameSize: 1500}}`, "ipPacketSizes: every size plus"},
		{"frame and ip sizes both", `ipPacketSizes: [1400]`, "frameSizes and ipPacketSizes"},
		{"imix test without imix", `tests: [imixThroughput]`, "imix must be set exactly when tests includes imixThroughput"},
		{"imix without imix test", `imix: {entries: [{frameSize: 64, weight: 7}]}`, "imix must be set exactly when tests includes imixThroughput"},
		{"sizes with only imix", `{tests: [imixThroughput], imix: {entries: [{frameSize: 64, weight: 1}]}}`, "frameSizes/ipPacketSizes are given but tests only has imixThroughput"},
		{"empty imix", `{tests: [imixThroughput, throughput], imix: {entries: []}}`, "spec.imix"},
		{"zero weight", `{tests: [imixThroughput, throughput], imix: {entries: [{frameSize: 64, weight: 0}]}}`, "spec.imix.entries[0].weight"},
		{"imix ref and entries", `{tests: [imixThroughput, throughput], imix: {profileRef: {name: x}, entries: [{frameSize: 64, weight: 1}]}}`, "give either profileRef or entries"},
		{"unknown test", `tests: [soak]`, "spec.tests[0]"},
		{"a timeline load given twice", `{tests: [timeline], timeline: {percentOfLineRate: "10", framesPerSecond: 1000}}`, "timeline: give the load one way"},
		{"a timeline load in bits and frames", `{tests: [timeline], timeline: {l2BitsPerSecond: 2G, framesPerSecond: 1000}}`, "timeline: give the load one way"},
		{"a timeline bin below 10 ms", `{tests: [timeline], timeline: {bin: 5ms}}`, "timeline.bin must be from 10ms to 10s"},
		{"a timeline settle of two minutes", `{tests: [timeline], timeline: {settle: 2m}}`, "timeline.settle must be from 10ms to 60s"},
		{"a timeline of 31 days", `{tests: [timeline], timeline: {duration: 744h}}`, "timeline.duration must be from 1s to 720h"},
		{"a timeline expectation of nothing", `{tests: [timeline], expectations: {timeline: {}}}`, "give maxOutages, maxOutage, maxLoss or minAvailability"},
		{"an outage of one frame", `{tests: [timeline], timeline: {outageMinFrames: 1}}`, "spec.timeline.outageMinFrames"},
		{"a path MTU probe of 50 ms", `{tests: [pathMTU], pathMTU: {trial: 50ms}}`, "pathMTU.trial must be from 100ms to 10s"},
		{"a path MTU finder above the engine's largest frame", `{tests: [pathMTU], pathMTU: {maxFrameSize: 9217}}`, "spec.pathMTU.maxFrameSize"},
		{"a path MTU finder at no rate", `{tests: [pathMTU], pathMTU: {framesPerSecond: -5}}`, "spec.pathMTU.framesPerSecond"},
		{"DF cleared on IPv6", `{traffic: {ipVersion: 6, dontFragment: false}, frameSizes: [128]}`, "spec.traffic.dontFragment: Invalid value"},
		{"fragments counted on af_packet", `{tests: [pathMTU], traffic: {dontFragment: false}, ports: [{name: west, driver: af_packet, interface: w}, {name: east, driver: af_xdp, interface: e}]}`, "needs receiving ports that see fragments"},
		{"fragmented frames lost on af_packet", `{traffic: {dontFragment: false, fragmentedFrames: Lost}, ports: [{name: west, driver: af_xdp, interface: w}, {name: east, driver: af_packet, interface: e}]}`, "spec.traffic.dontFragment: Invalid value"},
		{"a timeline with DF clear", `{tests: [timeline], traffic: {dontFragment: false}}`, "not for the timeline test"},
		{"an unknown fragmented frames choice", `traffic: {fragmentedFrames: Dropped}`, "spec.traffic.fragmentedFrames: Unsupported value"},
		{"no test", `tests: []`, "spec.tests"},
		{"zero search trial", `durations: {searchTrial: 0s}`, "spec.durations.searchTrial: Invalid value"},
		{"negative drain", `durations: {drain: -1s}`, "spec.durations.drain: Invalid value"},
		{"search longer than validation", `durations: {searchTrial: 90s, validationTrial: 60s}`, "searchTrial must not be longer than validationTrial"},
		{"loss tolerance not a percent", `throughput: {lossTolerance: "101"}`, "spec.throughput.lossTolerance"},
		{"zero resolution", `throughput: {resolution: "0"}`, "throughput.resolution must be larger than 0"},
		{"a latency bound of nothing", `throughput: {maxLatency: 0s}`, "throughput.maxLatency must be positive"},
		{"a percentile without a latency bound", `throughput: {maxLatencyPercentile: "99"}`, "throughput.maxLatencyPercentile is the percentile throughput.maxLatency bounds"},
		{"a percentile the engine does not report", `throughput: {maxLatency: 1ms, maxLatencyPercentile: "95"}`, "spec.throughput.maxLatencyPercentile: Unsupported value"},
		{"frame loss step above 10", `frameLoss: {step: "20"}`, "frameLoss.step must be more than 0 and at most 10"},
		{"a goal for the Binary search", `throughput: {method: Binary, goal: {preset: CSIT}}`, "throughput.goal applies to the Multistage search"},
		{"an exceed ratio of 100", `throughput: {goal: {exceedRatio: "100"}}`, "throughput.goal.exceedRatio must be less than 100"},
		{"a goal width of 0", `throughput: {goal: {width: "0"}}`, "throughput.goal.width must be at least 0.01 and less than 100"},
		{"a goal width finer than 0.01", `throughput: {goal: {width: "0.005"}}`, "throughput.goal.width must be at least 0.01"},
		{"a goal width of 100", `throughput: {goal: {preset: CSIT, width: "100"}}`, "throughput.goal.width must be at least 0.01 and less than 100"},
		{"an unknown goal preset", `throughput: {goal: {preset: TRex}}`, "spec.throughput.goal.preset: Unsupported value"},
		{"a zero final trial", `throughput: {goal: {finalTrialDuration: 0s}}`, "must be longer than 0s"},
		{"one port", `ports: [{name: west, resource: a/b}]`, "spec.ports"},
		{"three ports", `ports: [{name: a, resource: a/b}, {name: b, resource: a/b}, {name: c, resource: a/b}]`, "spec.ports"},
		{"same port twice", `ports: [{name: west, resource: a/b}, {name: west, resource: a/b}]`, "spec.ports"},
		{"gateway and peer MAC", `ports: [{name: west, resource: a/b, gateway: 198.18.1.1, peerMAC: "02:00:00:00:00:01"}, {name: east, resource: a/b}]`, "either a gateway"},
		{"two ports on one interface", `ports: [{name: west, driver: af_packet, interface: net1}, {name: east, driver: af_packet, interface: net1}]`, "ports[].interface: both ports would use one interface of one tester pod"},
		{"two ports on one interface of one node", `ports: [{name: west, driver: af_packet, interface: net1, node: a}, {name: east, driver: af_xdp, interface: net1, node: a}]`, "ports[].interface: both ports would use one interface of one tester pod"},
		{"a named interface on Multus's default name of the other", `ports: [{name: west, driver: af_packet}, {name: east, driver: af_packet, interface: net1}]`, "ports[].interface: both ports would use one interface of one tester pod"},
		{"an empty interface is Multus's default", `ports: [{name: west, driver: af_packet, interface: ""}, {name: east, driver: af_packet, interface: net1}]`, "ports[].interface: both ports would use one interface of one tester pod"},
		{"an empty node pins nothing", `ports: [{name: west, driver: af_packet, interface: net1, node: ""}, {name: east, driver: af_packet, interface: net1, node: b}]`, "ports[].interface: both ports would use one interface of one tester pod"},
		{"two ports on one interface, one pinned", `ports: [{name: west, driver: af_packet, interface: net1, node: a}, {name: east, driver: af_packet, interface: net1}]`, "ports[].interface: both ports would use one interface of one tester pod"},
		{"vfio without resource", `ports: [{name: west}, {name: east, resource: a/b}]`, "resource: a vfio-pci port needs"},
		{"bad MAC", `ports: [{name: west, resource: a/b, peerMAC: "zz"}, {name: east, resource: a/b}]`, "spec.ports[0].peerMAC"},
		{"bad line rate", `traffic: {lineRate: 7G}`, "spec.traffic.lineRate"},
		{"vlan out of range", `traffic: {vlan: 4095}`, "spec.traffic.vlan"},
		{"ipv6 64B frames", `traffic: {ipVersion: 6}`, "IPv6/UDP frames with linerate's 18 B tag need at least 84 B"},
		{"too many flows", `traffic: {flows: 100000}`, "spec.traffic.flows"},
		{"b2b resolution above max", `backToBack: {maxFrames: 10, resolution: 16}`, "backToBack.resolution must be smaller"},
		{"hugepage size", `tester: {hugePageSize: 4Mi}`, "spec.tester.hugePageSize"},
		{"expectation without value", `expectations: {minThroughput: [{frameSize: 64}]}`, "minThroughput: give"},
		{"deadline zero", `activeDeadlineSeconds: 0`, "spec.activeDeadlineSeconds"},
		{"address out of range", `ports: [{name: west, resource: a/b, address: 198.18.1.300/24}, {name: east, resource: a/b}]`, "spec.ports[0].address: Invalid value"},
		{"address without prefix", `ports: [{name: west, resource: a/b, address: 198.18.1.2}, {name: east, resource: a/b}]`, "want an IPv4 or IPv6 address with prefix length"},
		{"gateway with prefix", `ports: [{name: west, resource: a/b, gateway: 198.18.1.1/24}, {name: east, resource: a/b}]`, "spec.ports[0].gateway: Invalid value"},
		{"gateway off the subnet", `ports: [{name: west, resource: a/b, address: 198.18.1.2/24, gateway: 198.19.1.1}, {name: east, resource: a/b}]`, "gateway: the DUT's address must lie in the port's subnet"},
		{"IPv4 address with ipVersion 6", `{traffic: {ipVersion: 6}, frameSizes: [128], ports: [{name: west, resource: a/b, address: 198.18.1.2/24}, {name: east, resource: a/b}]}`, "every address must be of traffic.ipVersion"},
		{"IPv6 gateway with IPv4", `ports: [{name: west, resource: a/b, gateway: "2001:2:0:1::1"}, {name: east, resource: a/b}]`, "every gateway must be of traffic.ipVersion"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var base, patch map[string]any
			if err := yaml.Unmarshal([]byte(validTest), &base); err != nil {
				t.Fatal(err)
			}
			if err := yaml.Unmarshal([]byte(c.mutate), &patch); err != nil {
				t.Fatal(err)
			}
			spec := base["spec"].(map[string]any)
			for k, v := range patch {
				if v == nil {
					delete(spec, k)
				} else {
					spec[k] = v
				}
			}
			u := map[string]any{}
			for k, v := range base {
				u[k] = v
			}
			meta := u["metadata"].(map[string]any)
			meta["name"] = fmt.Sprintf("bad-%d", i)
			doc, _ := yaml.Marshal(u)
			obj := &unstructuredTest{}
			if err := yaml.Unmarshal(doc, &obj.Object); err != nil {
				t.Fatal(err)
			}
			err := k8s.Create(context.Background(), obj.toUnstructured())
			if err == nil {
				t.Fatalf("the API server accepted %s", c.mutate)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("message does not name the problem.\n want substring: %s\n got: %v", c.want, err)
			}
		})
	}
}

func TestImixProfileValidation(t *testing.T) {
	for i, c := range []struct{ spec, want string }{
		{`{entries: []}`, "spec.entries"},
		{`{entries: [{frameSize: 64, weight: 0}]}`, "spec.entries[0].weight"},
		{`{entries: [{frameSize: 63, weight: 1}]}`, "spec.entries[0].frameSize"},
		{`{entries: [{frameSize: 64, weight: 1}, {frameSize: 64, weight: 2}]}`, "each frameSize may appear only once"},
		{`{entries: [{frameSize: 64, weight: 1}], order: Sorted}`, "spec.order"},
	} {
		doc := fmt.Sprintf("apiVersion: linerate.dev/v1alpha1\nkind: ImixProfile\nmetadata: {name: bad-%d, namespace: v}\nspec: %s\n", i, c.spec)
		obj := &unstructuredTest{}
		if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
			t.Fatal(err)
		}
		err := k8s.Create(context.Background(), obj.toUnstructured())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: want an error naming %q, got %v", c.spec, c.want, err)
		}
	}
}

// What a run measures is fixed once its tester pods run, one rule per field naming it; before that (queued,
// or waiting for its plan: an ImixProfile, a calibration, a fix of its spec) and when suspended it may
// change, and run control and notes may change at any time.
func TestRunningSpecCannotChangeButRunControlCan(t *testing.T) {
	ctx := context.Background()
	edits := []struct {
		field  string
		change func(*v1alpha1.TrafficTest)
	}{
		{"tests", func(x *v1alpha1.TrafficTest) { x.Spec.Tests = []v1alpha1.TestKind{v1alpha1.TestThroughput} }},
		{"frameSizes", func(x *v1alpha1.TrafficTest) { x.Spec.FrameSizes = []int32{128} }},
		{"ipPacketSizes", func(x *v1alpha1.TrafficTest) { x.Spec.FrameSizes, x.Spec.IPPacketSizes = nil, []int32{46, 1500} }},
		{"imix", func(x *v1alpha1.TrafficTest) {
			x.Spec.Tests = append(x.Spec.Tests, v1alpha1.TestImixThroughput)
			x.Spec.Imix = &v1alpha1.ImixSource{Entries: []v1alpha1.ImixEntry{{FrameSize: 64, Weight: 7}, {FrameSize: 1518, Weight: 1}}}
		}},
		{"durations.searchTrial", func(x *v1alpha1.TrafficTest) { x.Spec.Durations.SearchTrial.Duration *= 2 }},
		{"durations.dutRest", func(x *v1alpha1.TrafficTest) { x.Spec.Durations.DUTRest.Duration *= 2 }},
		{"durations.validationTrial", func(x *v1alpha1.TrafficTest) { x.Spec.Durations.ValidationTrial.Duration += time.Second }},
		{"durations.latencyTrial", func(x *v1alpha1.TrafficTest) { x.Spec.Durations.LatencyTrial.Duration += time.Second }},
		{"durations.backToBackTrial", func(x *v1alpha1.TrafficTest) { x.Spec.Durations.BackToBackTrial.Duration += time.Second }},
		{"durations.warmUp", func(x *v1alpha1.TrafficTest) { x.Spec.Durations.WarmUp.Duration += time.Second }},
		{"durations.drain", func(x *v1alpha1.TrafficTest) { x.Spec.Durations.Drain.Duration += time.Second }},
		{"throughput", func(x *v1alpha1.TrafficTest) { x.Spec.Throughput.Repetitions = 7 }},
		{"latency", func(x *v1alpha1.TrafficTest) { x.Spec.Latency.Repetitions = 21 }},
		{"frameLoss", func(x *v1alpha1.TrafficTest) { x.Spec.FrameLoss.Step = "5" }},
		{"backToBack", func(x *v1alpha1.TrafficTest) { x.Spec.BackToBack.Repetitions = 51 }},
		{"ports", func(x *v1alpha1.TrafficTest) { x.Spec.Ports[0].Address = "198.18.7.2/24" }},
		{"traffic", func(x *v1alpha1.TrafficTest) { x.Spec.Traffic.DSCP = 46 }},
		{"dut.name", func(x *v1alpha1.TrafficTest) { x.Spec.DUT.Name = "another-gateway" }},
	}
	states := []struct {
		name   string
		status v1alpha1.TrafficTestStatus
		locked bool
	}{
		{"running", v1alpha1.TrafficTestStatus{Phase: v1alpha1.PhaseRunning, TesterPods: []string{"p-tester"}}, true},
		{"pods made, not yet running", v1alpha1.TrafficTestStatus{Phase: v1alpha1.PhasePending, TesterPods: []string{"p-tester"}}, true},
		{"pending, waiting for its plan", v1alpha1.TrafficTestStatus{Phase: v1alpha1.PhasePending}, false},
		{"queued", v1alpha1.TrafficTestStatus{Phase: v1alpha1.PhaseQueued}, false},
		{"suspended", v1alpha1.TrafficTestStatus{Phase: v1alpha1.PhaseSuspended}, false},
	}
	n := 0
	inState := func(t *testing.T, st v1alpha1.TrafficTestStatus) *v1alpha1.TrafficTest {
		t.Helper()
		n++
		tt := parse(t, validTest, fmt.Sprintf("edit-%d", n))
		tt.Spec.DUT.Name = "gateway"
		if err := k8s.Create(ctx, tt); err != nil {
			t.Fatal(err)
		}
		tt.Status = st
		if err := k8s.Status().Update(ctx, tt); err != nil {
			t.Fatal(err)
		}
		return tt
	}
	for _, st := range states {
		for _, e := range edits {
			t.Run(st.name+"/"+e.field, func(t *testing.T) {
				tt := inState(t, st.status)
				e.change(tt)
				err := k8s.Update(ctx, tt)
				refused := err != nil && strings.Contains(err.Error(), "spec."+e.field+": ")
				switch {
				case st.locked && !refused:
					t.Errorf("editing spec.%s: want a refusal naming it, got %v", e.field, err)
				case st.locked && !strings.Contains(err.Error(), "while its tester pods run"):
					t.Errorf("the refusal does not say why: %v", err)
				case !st.locked && err != nil:
					t.Errorf("editing spec.%s must be allowed: %v", e.field, err)
				}
			})
		}
	}
	tt := inState(t, states[0].status)
	tt.Spec.Cancel = true
	tt.Spec.DUT.Notes = "stopped by hand"
	tt.Spec.Priority = 3
	if err := k8s.Update(ctx, tt); err != nil {
		t.Fatalf("cancel, priority and DUT notes must stay editable while running: %v", err)
	}
}

// unstructuredTest sends YAML as-is, so the API server (not Go's types) sees bad values.
type unstructuredTest struct{ Object map[string]any }

func (u *unstructuredTest) toUnstructured() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: u.Object}
}

// Every sample a newcomer may apply must be accepted as written.
func TestSamplesAreAccepted(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "config", "samples", "*.yaml"))
	if err != nil || len(files) < 4 {
		t.Fatalf("samples: %v %v", files, err)
	}
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(data), "\n---\n") {
			obj := &unstructuredTest{}
			if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			u := obj.toUnstructured()
			u.SetNamespace("v")
			u.SetName("sample-" + u.GetName())
			if err := k8s.Create(context.Background(), u); err != nil {
				t.Errorf("%s was refused: %v", f, err)
			}
		}
	}
}

func TestScheduleValidation(t *testing.T) {
	tmpl := parse(t, validTest, "")
	cases := []struct {
		name string
		edit func(*v1alpha1.TrafficTestSchedule)
		want string // empty: accepted
	}{
		{"valid", func(*v1alpha1.TrafficTestSchedule) {}, ""},
		{"time zone inside the schedule", func(s *v1alpha1.TrafficTestSchedule) { s.Spec.Schedule = "CRON_TZ=Europe/Berlin 0 2 * * *" }, "spec.timeZone, not as CRON_TZ="},
		{"name too long for its runs", func(s *v1alpha1.TrafficTestSchedule) { s.Name = strings.Repeat("n", 46) }, "metadata.name: a TrafficTestSchedule's name is at most 45"},
		{"@every", func(s *v1alpha1.TrafficTestSchedule) { s.Spec.Schedule = "@every 90s" }, "@every is not supported"},
		{"no passed run kept to compare with", func(s *v1alpha1.TrafficTestSchedule) { s.Spec.PassedRunsHistoryLimit = ptr(int32(0)) }, "spec.passedRunsHistoryLimit"},
		{"unknown concurrency policy", func(s *v1alpha1.TrafficTestSchedule) { s.Spec.ConcurrencyPolicy = "Queue" }, "spec.concurrencyPolicy"},
		{"template is checked as a TrafficTest", func(s *v1alpha1.TrafficTestSchedule) { s.Spec.Template.Spec.FrameSizes = []int32{32} }, "spec.template.spec.frameSizes[0]"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &v1alpha1.TrafficTestSchedule{ObjectMeta: metav1.ObjectMeta{Namespace: "v", Name: fmt.Sprintf("nightly-%d", i)},
				Spec: v1alpha1.TrafficTestScheduleSpec{Schedule: "0 2 * * *", Template: v1alpha1.TrafficTestTemplate{Spec: tmpl.Spec}}}
			c.edit(s)
			err := k8s.Create(context.Background(), s)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want == "":
				if s.Spec.ConcurrencyPolicy != v1alpha1.ForbidConcurrent || *s.Spec.PassedRunsHistoryLimit != 3 || *s.Spec.FailedRunsHistoryLimit != 3 {
					t.Errorf("defaults: %+v", s.Spec)
				}
			case err == nil || !strings.Contains(err.Error(), c.want):
				t.Fatalf("error %v, want one naming %q", err, c.want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
