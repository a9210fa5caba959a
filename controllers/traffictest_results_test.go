package controllers

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/results"
	"linerate.dev/linerate/internal/tester"
)

// The operator makes the ConfigMap the runner seals trial records into next, once the records in the
// results ConfigMap are half way to being sealed, owned by the test so that it goes with it; the tester
// itself may create nothing.
func TestOperatorMakesTheNextTrialSegment(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	ctx := context.Background()
	newTest(t, ns, "long", sriovTest())
	kubelet(t, waitPod(t, ns, "long-tester"), corev1.PodRunning, 0, "")
	fault := strings.Repeat("port west: the tester's own receive path dropped frames; ", 20)
	var trials []results.Trial
	for i := 1; i <= 500; i++ {
		trials = append(trials, results.Trial{Seq: 2000 + i, Test: v1alpha1.TestThroughput, FrameSize: 64, TesterFaults: []string{fault}})
	}
	write := func(n int) {
		writeResults(t, ns, "long", testerWrites{trials: trials[:n],
			segments: []results.Segment{{ConfigMap: "long-trials-1", Trials: 2000, FirstSeq: 1, LastSeq: 2000}}})
	}
	write(10)
	waitTest(t, ns, "long", "10 open records counted", func(tt *v1alpha1.TrafficTest) bool { return tt.Status.TrialsMeasured == 2010 })
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "long-trials-2"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a spare segment made while the open one is nearly empty: %v", err)
	}
	write(500) // some 600 KB of JSON lines: past half of results.SealBytes
	spare := &corev1.ConfigMap{}
	eventually(t, "segment long-trials-2", func() (bool, string) {
		err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "long-trials-2"}, spare)
		return err == nil, fmt.Sprint(err)
	})
	tt := getTest(t, ns, "long")
	if !metav1.IsControlledBy(spare, tt) || spare.Labels[tester.LabelTest] != "long" {
		t.Errorf("segment long-trials-2: owners %+v labels %v", spare.OwnerReferences, spare.Labels)
	}
}
