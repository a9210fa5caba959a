package controllers

import (
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"linerate.dev/linerate/api/v1alpha1"
)

// sriovTest is the TrafficTest most controller tests start from: throughput at 64 and 1518 B through
// two 82599 VFs, changed by each test as it needs.
func sriovTest(change ...func(*v1alpha1.TrafficTest)) *v1alpha1.TrafficTest {
	tt := &v1alpha1.TrafficTest{Spec: v1alpha1.TrafficTestSpec{
		Tests:      []v1alpha1.TestKind{v1alpha1.TestThroughput},
		FrameSizes: []int32{64, 1518},
		Durations:  v1alpha1.Durations{SearchTrial: metav1.Duration{Duration: time.Second}, ValidationTrial: metav1.Duration{Duration: 2 * time.Second}},
		DUT:        v1alpha1.DUTSpec{Name: "gw-1", Cipher: "AES-256-GCM"},
		Ports: []v1alpha1.PortSpec{
			{Name: "west", Network: "sriov-west", Resource: "intel.com/sriov_82599"},
			{Name: "east", Network: "sriov-east", Resource: "intel.com/sriov_82599"},
		},
		Tester: v1alpha1.TesterSpec{CPUs: 4, HugePages: resource.MustParse("2Gi")},
	}}
	for _, c := range change {
		c(tt)
	}
	return tt
}

// withPorts replaces the ports and drops what the VF ports brought along.
func withPorts(ports ...v1alpha1.PortSpec) func(*v1alpha1.TrafficTest) {
	return func(tt *v1alpha1.TrafficTest) {
		tt.Spec.Ports = ports
		tt.Spec.FrameSizes, tt.Spec.Durations, tt.Spec.DUT, tt.Spec.Tester = nil, v1alpha1.Durations{}, v1alpha1.DUTSpec{}, v1alpha1.TesterSpec{}
	}
}

func unidirectional(tt *v1alpha1.TrafficTest) { tt.Spec.Traffic.Direction = v1alpha1.Unidirectional }

func minThroughput(size int32, percent string) func(*v1alpha1.TrafficTest) {
	return func(tt *v1alpha1.TrafficTest) {
		if tt.Spec.Expectations == nil {
			tt.Spec.Expectations = &v1alpha1.Expectations{}
		}
		tt.Spec.Expectations.MinThroughput = append(tt.Spec.Expectations.MinThroughput,
			v1alpha1.ThroughputExpectation{FrameSize: size, PercentOfLineRate: v1alpha1.Percent(percent)})
	}
}

func ptr[T any](v T) *T { return &v }
