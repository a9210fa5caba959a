package runner_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"linerate.dev/linerate/api/v1alpha1"
)

// The TrafficTests of the runner's tests, as typed objects; the CLI gets them as the YAML a user writes.

var throughput = []v1alpha1.TestKind{v1alpha1.TestThroughput}

func dur(d time.Duration) metav1.Duration { return metav1.Duration{Duration: d} }

// shortTrials are the durations of every netns test: trials short enough for a two-core machine.
var shortTrials = v1alpha1.Durations{SearchTrial: dur(500 * time.Millisecond), ValidationTrial: dur(time.Second),
	LatencyTrial: dur(time.Second), WarmUp: dur(200 * time.Millisecond), Drain: dur(300 * time.Millisecond), DUTRest: dur(100 * time.Millisecond)}

func trafficTest(name string, spec v1alpha1.TrafficTestSpec) *v1alpha1.TrafficTest {
	return &v1alpha1.TrafficTest{TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "TrafficTest"},
		ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
}

// routedTest measures through the router namespace router() builds: t0 (198.18.1.2) to t1 (198.19.1.2),
// 1 Gbit/s, zero loss tolerated, a Multistage search up to maxRate percent at the given resolution.
func routedTest(name string, tests []v1alpha1.TestKind, sizes []int32, resolution, maxRate string, change ...func(*v1alpha1.TrafficTest)) *v1alpha1.TrafficTest {
	tt := trafficTest(name, v1alpha1.TrafficTestSpec{Tests: tests, FrameSizes: sizes, Durations: shortTrials,
		Throughput: v1alpha1.ThroughputParams{LossTolerance: "0", Resolution: v1alpha1.Percent(resolution), MaxRate: v1alpha1.Percent(maxRate),
			Method: v1alpha1.SearchMultistage},
		FrameLoss: v1alpha1.FrameLossParams{Step: "1"},
		Traffic:   v1alpha1.TrafficParams{Direction: v1alpha1.Unidirectional, LineRate: "1G"},
		Ports: []v1alpha1.PortSpec{
			{Name: "west", Driver: v1alpha1.DriverAFPacket, Interface: "t0", Address: "198.18.1.2/24", Gateway: "198.18.1.1"},
			{Name: "east", Driver: v1alpha1.DriverAFPacket, Interface: "t1", Address: "198.19.1.2/24", Gateway: "198.19.1.1"},
		}})
	for _, c := range change {
		c(tt)
	}
	return tt
}

// loopTest measures across the veth pair wire() builds, peers named by MAC (no router, no ARP).
func loopTest(change ...func(*v1alpha1.TrafficTest)) *v1alpha1.TrafficTest {
	wire := func(tt *v1alpha1.TrafficTest) {
		tt.Spec.FrameLoss.Step = "0.5"
		tt.Spec.Ports = []v1alpha1.PortSpec{
			{Name: "west", Driver: v1alpha1.DriverAFPacket, Interface: "t0", Address: "198.18.1.2/24", PeerMAC: "02:4c:52:00:00:02"},
			{Name: "east", Driver: v1alpha1.DriverAFPacket, Interface: "t1", Address: "198.18.1.3/24", PeerMAC: "02:4c:52:00:00:01"},
		}
	}
	return routedTest("loop", []v1alpha1.TestKind{v1alpha1.TestThroughput, v1alpha1.TestFrameLoss}, []int32{64, 1518}, "0.1", "1",
		append([]func(*v1alpha1.TrafficTest){wire}, change...)...)
}

// validationTrial sets the length of the trials that confirm an NDR.
func validationTrial(d time.Duration) func(*v1alpha1.TrafficTest) {
	return func(tt *v1alpha1.TrafficTest) { tt.Spec.Durations.ValidationTrial = dur(d) }
}

// asYAML is the file a user gives `linerate run -f`.
func asYAML(t *testing.T, obj any) string {
	t.Helper()
	b, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
