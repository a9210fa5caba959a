//go:build e2e

// Package e2e runs linerate for real on the local single-node cluster (hack/e2e.sh brings it up): the
// operator installed with its Helm chart, the tester pod running the DPDK engine on af_packet ports that
// Multus hands it, and a device under test in network namespaces.
package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/results"
	"linerate.dev/linerate/internal/tester"
)

var (
	k8s        client.Client
	kubeconfig = os.Getenv("KUBECONFIG")
	kubectl    = envOr("E2E_KUBECONFIG_KUBECTL", "kubectl")
	namespace  = envOr("E2E_NAMESPACE", "default")
	operatorNS = envOr("E2E_OPERATOR_NAMESPACE", "linerate-system")
	testYAML   = os.Getenv("E2E_TEST_YAML") // the demo TrafficTest (the sample with the demo's ports)
)

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func TestMain(m *testing.M) {
	if kubeconfig == "" || testYAML == "" {
		fmt.Fprintln(os.Stderr, "KUBECONFIG and E2E_TEST_YAML are not set: run the e2e suite with `make test-e2e`")
		os.Exit(1)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1alpha1.AddToScheme(scheme))
	if k8s, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// load reads the demo TrafficTest and lets a test adjust it.
func load(t *testing.T, name string, adjust func(*v1alpha1.TrafficTest)) *v1alpha1.TrafficTest {
	t.Helper()
	data, err := os.ReadFile(testYAML)
	if err != nil {
		t.Fatal(err)
	}
	tt := &v1alpha1.TrafficTest{}
	if err := yaml.Unmarshal(data, tt); err != nil {
		t.Fatal(err)
	}
	tt.Name, tt.Namespace = name, namespace
	tt.ResourceVersion = ""
	if adjust != nil {
		adjust(tt)
	}
	waitPortsFree(t)
	if err := k8s.Create(context.Background(), tt); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = k8s.Delete(context.Background(), tt, client.PropagationPolicy(metav1.DeletePropagationForeground))
		waitPortsFree(t)
	})
	return tt
}

// waitPortsFree waits until no tester pod holds the DUT's ports (host-device interfaces can be in one pod
// only).
func waitPortsFree(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		var pods corev1.PodList
		if err := k8s.List(context.Background(), &pods, client.InNamespace(namespace), client.HasLabels{tester.LabelTest}); err == nil {
			busy := 0
			for _, p := range pods.Items {
				if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
					busy++
				}
			}
			if busy == 0 {
				return
			}
		}
		time.Sleep(2 * time.Second)
	}
	t.Fatal("tester pods of an earlier test still hold the DUT's ports")
}

func wait(t *testing.T, tt *v1alpha1.TrafficTest, timeout time.Duration, what string, cond func(*v1alpha1.TrafficTest) bool) *v1alpha1.TrafficTest {
	t.Helper()
	deadline := time.Now().Add(timeout)
	cur := &v1alpha1.TrafficTest{}
	last := ""
	for time.Now().Before(deadline) {
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(tt), cur); err == nil {
			if cond(cur) {
				return cur
			}
			line := fmt.Sprintf("phase=%s progress=%v trials=%d", cur.Status.Phase, cur.Status.Progress, cur.Status.TrialsMeasured)
			if line != last {
				t.Logf("%s: %s", tt.Name, line)
				last = line
			}
		}
		time.Sleep(2 * time.Second)
	}
	t.Fatalf("%s: timed out waiting for %s; status: %+v", tt.Name, what, cur.Status)
	return nil
}

func finished(tt *v1alpha1.TrafficTest) bool {
	return tt.Status.Phase == v1alpha1.PhaseSucceeded || tt.Status.Phase == v1alpha1.PhaseFailed
}

func TestSampleMeasuresTheDUT(t *testing.T) {
	tt := load(t, "e2e-sample", nil)
	done := wait(t, tt, 15*time.Minute, "the end", finished)
	if done.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("the sample failed: %+v", done.Status.Conditions)
	}
	r := done.Status.Results
	if r == nil || len(r.Throughput) == 0 {
		t.Fatalf("no throughput results: %+v", done.Status)
	}
	for _, th := range r.Throughput {
		// Plausible: the DUT forwarded something, and not more than the line.
		if th.NDR.FramesPerSecond <= 0 || th.NDR.L1BitsPerSecond > r.LineRateBitsPerSecond || th.Trials == 0 {
			t.Errorf("implausible NDR at %d B %s: %+v", th.FrameSize, th.Direction, th.NDR)
		}
		t.Logf("NDR %d B %s: %d frames/s, %d bit/s L2 (%s%% of line), %d trials", th.FrameSize, th.Direction,
			th.NDR.FramesPerSecond, th.NDR.L2BitsPerSecond, th.NDR.PercentOfLineRate, th.Trials)
	}
	if done.Status.TrialsMeasured == 0 || done.Status.Headline == "" {
		t.Errorf("status lacks trials/headline: %+v", done.Status)
	}
	metrics := scrapeOperator(t)
	want := fmt.Sprintf(`traffictest="%s"`, tt.Name)
	found := false
	for _, line := range strings.Split(metrics, "\n") {
		if strings.HasPrefix(line, "linerate_throughput_l2_bits_per_second{") && strings.Contains(line, want) {
			found = true
		}
	}
	if !found {
		t.Errorf("the operator's /metrics has no throughput for %s", tt.Name)
	}
}

func TestImpossibleExpectationFailsTheVerdict(t *testing.T) {
	tt := load(t, "e2e-strict", func(tt *v1alpha1.TrafficTest) {
		tt.Spec.Tests = []v1alpha1.TestKind{v1alpha1.TestThroughput}
		tt.Spec.FrameSizes = tt.Spec.FrameSizes[:1]
		q := resourceQuantity(t, "100G")
		tt.Spec.Expectations = &v1alpha1.Expectations{MinThroughput: []v1alpha1.ThroughputExpectation{{L2BitsPerSecond: &q}}}
	})
	done := wait(t, tt, 10*time.Minute, "the end", finished)
	if done.Status.Verdict != v1alpha1.VerdictFailed {
		t.Fatalf("verdict %q, want Failed; failures %v", done.Status.Verdict, done.Status.Failures)
	}
	c := meta.FindStatusCondition(done.Status.Conditions, v1alpha1.ConditionExpectationsMet)
	if c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("ExpectationsMet: %+v", c)
	}
}

func TestDeletingARunningTestRemovesItsPods(t *testing.T) {
	tt := load(t, "e2e-delete", nil)
	wait(t, tt, 5*time.Minute, "Running", func(tt *v1alpha1.TrafficTest) bool { return tt.Status.Phase == v1alpha1.PhaseRunning })
	if err := k8s.Delete(context.Background(), tt); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		var pods corev1.PodList
		_ = k8s.List(context.Background(), &pods, client.InNamespace(namespace), client.MatchingLabels{tester.LabelTest: tt.Name})
		if len(pods.Items) == 0 {
			return
		}
		time.Sleep(2 * time.Second)
	}
	t.Fatal("the tester pod outlived its TrafficTest")
}

func TestKilledTesterKeepsMeasuredTrials(t *testing.T) {
	tt := load(t, "e2e-kill", nil)
	running := wait(t, tt, 10*time.Minute, "two trials", func(tt *v1alpha1.TrafficTest) bool { return tt.Status.TrialsMeasured >= 2 })
	measured := running.Status.TrialsMeasured
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: tester.PodName(tt, tester.RoleTester)}}
	if err := k8s.Delete(context.Background(), pod, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	done := wait(t, tt, 3*time.Minute, "Failed", finished)
	c := meta.FindStatusCondition(done.Status.Conditions, v1alpha1.ConditionFailed)
	if done.Status.Phase != v1alpha1.PhaseFailed || c == nil || c.Status != metav1.ConditionTrue || c.Message == "" {
		t.Fatalf("want Failed with a reason, got %s %+v", done.Status.Phase, c)
	}
	if done.Status.TrialsMeasured < measured {
		t.Errorf("trials lost: %d before the kill, %d after", measured, done.Status.TrialsMeasured)
	}
	cm := &corev1.ConfigMap{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: results.ConfigMapName(tt.Name)}, cm); err != nil {
		t.Fatal(err)
	}
	trials, err := results.DecodeTrials(cm.BinaryData[results.KeyTrials])
	if err != nil || int32(len(trials)) < measured {
		t.Errorf("results ConfigMap holds %d trials (%v), want >= %d", len(trials), err, measured)
	}
	t.Logf("killed after %d trials: %s: %s", measured, c.Reason, c.Message)
}

func TestManagerRestartMidTestLosesNothing(t *testing.T) {
	tt := load(t, "e2e-restart", nil)
	wait(t, tt, 10*time.Minute, "a trial", func(tt *v1alpha1.TrafficTest) bool { return tt.Status.TrialsMeasured >= 1 })
	var pods corev1.PodList
	if err := k8s.List(context.Background(), &pods, client.InNamespace(operatorNS), client.MatchingLabels{"app.kubernetes.io/name": "linerate"}); err != nil {
		t.Fatal(err)
	}
	for i := range pods.Items {
		if err := k8s.Delete(context.Background(), &pods.Items[i]); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	done := wait(t, tt, 15*time.Minute, "the end", finished)
	if done.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("after an operator restart: %s %+v", done.Status.Phase, done.Status.Conditions)
	}
	cm := &corev1.ConfigMap{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: results.ConfigMapName(tt.Name)}, cm); err != nil {
		t.Fatal(err)
	}
	trials, _ := results.DecodeTrials(cm.BinaryData[results.KeyTrials])
	if int32(len(trials)) != done.Status.TrialsMeasured {
		t.Errorf("status counts %d trials, the ConfigMap holds %d", done.Status.TrialsMeasured, len(trials))
	}
}

// scrapeOperator reads the operator's /metrics through kubectl port-forward on 127.0.0.1.
func scrapeOperator(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(kubectl, "--kubeconfig", kubeconfig, "-n", operatorNS, "port-forward",
		"svc/linerate-controller-manager-metrics-service", "--address", "127.0.0.1", ":8080")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	// "Forwarding from 127.0.0.1:PORT -> 8080"
	sc := bufio.NewScanner(out)
	port := ""
	for sc.Scan() {
		if _, after, ok := strings.Cut(sc.Text(), "127.0.0.1:"); ok {
			port, _, _ = strings.Cut(after, " ")
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	if port == "" {
		t.Fatal("kubectl port-forward printed no local port")
	}
	resp, err := http.Get("http://127.0.0.1:" + port + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func resourceQuantity(t *testing.T, s string) resource.Quantity {
	t.Helper()
	q, err := resource.ParseQuantity(s)
	if err != nil {
		t.Fatal(err)
	}
	return q
}
