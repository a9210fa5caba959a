//go:build e2e

// Package e2e runs linerate for real on the local single-node cluster that hack/e2e.sh (make test-e2e)
// brings up: the operator installed with its Helm chart, the tester pod running the DPDK engine on af_packet
// ports that Multus' host-device plugin hands it, and a device under test in network namespaces — a
// forwarding namespace that shapes each direction with tbf, so the throughput it really has is known.
//
// Environment (hack/e2e.sh sets it):
//
//	KUBECONFIG              the cluster
//	E2E_TEST_YAML           the TrafficTest the tests start from (config/samples/throughput-test-demo.yaml)
//	E2E_NAMESPACE           where tests run (default "default")
//	E2E_OPERATOR_NAMESPACE  the Helm release's namespace (default "linerate-system")
//	E2E_HELM_RELEASE        the Helm release (default "linerate")
//	E2E_DUT_TBF_BPS         the DUT's tbf rate per direction in bit/s, the known truth (optional)
//	E2E_DUT_PORTS           the DUT's tester-side interfaces "west,east" (optional): checked to be back on
//	                        the host after each test
//	E2E_DUT_CGROUP          the DUT's cgroup (hack/dut/lib.sh dut_cgroup; optional): the tests read its CPU
//	                        time (spec.dut.cpu) in place of the demo's gateways'; the router's holds no process
//	E2E_KUBECTL             kubectl matching the server (default "kubectl")
package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
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
	"linerate.dev/linerate/internal/engine"
	"linerate.dev/linerate/internal/results"
	"linerate.dev/linerate/internal/testenv"
	"linerate.dev/linerate/internal/tester"
)

var (
	k8s         client.Client
	kubeconfig  = os.Getenv("KUBECONFIG")
	kubectl     = envOr("E2E_KUBECTL", "kubectl")
	namespace   = envOr("E2E_NAMESPACE", "default")
	operatorNS  = envOr("E2E_OPERATOR_NAMESPACE", "linerate-system")
	helmRelease = envOr("E2E_HELM_RELEASE", "linerate")
	testYAML    = os.Getenv("E2E_TEST_YAML")
	dutPorts    = splitNonEmpty(os.Getenv("E2E_DUT_PORTS"))
	dutTBFBps   = envInt("E2E_DUT_TBF_BPS")
	dutCgroup   = os.Getenv("E2E_DUT_CGROUP")
)

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func envInt(k string) int64 {
	v, err := strconv.ParseInt(os.Getenv(k), 10, 64)
	if err != nil {
		return 0
	}
	return v
}

func splitNonEmpty(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
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
	utilruntime.Must(apiextensionsv1.AddToScheme(scheme))
	utilruntime.Must(v1alpha1.AddToScheme(scheme))
	if k8s, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// load reads the demo TrafficTest, lets a test adjust it, creates it and deletes it when the test ends.
func load(t *testing.T, name string, adjust func(*v1alpha1.TrafficTest)) *v1alpha1.TrafficTest {
	t.Helper()
	tt := demoTest(t, name, adjust)
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

// demoTest is the demo TrafficTest against the e2e DUT, adjusted by the test, not yet created.
func demoTest(t *testing.T, name string, adjust func(*v1alpha1.TrafficTest)) *v1alpha1.TrafficTest {
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
	// The e2e DUT is a plain router with a known rate, not the demo's IPsec pair: no expectations of the
	// demo's, unless a test sets its own.
	tt.Spec.Expectations = nil
	tt.Spec.DUT.Name = "e2e-router"
	// the router's own cgroup, not the demo's gateways'
	tt.Spec.DUT.CPU = nil
	if dutCgroup != "" {
		tt.Spec.DUT.CPU = &v1alpha1.DUTCPUSource{Cgroup: dutCgroup}
	}
	if adjust != nil {
		adjust(tt)
	}
	return tt
}

// waitPortsFree waits until no tester pod holds the DUT's ports (host-device interfaces can be in one pod
// only) and, when E2E_DUT_PORTS names them, until host-device has handed them back to the host.
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
			if busy == 0 && portsOnHost() {
				return
			}
		}
		time.Sleep(2 * time.Second)
	}
	t.Fatal("tester pods of an earlier test still hold the DUT's ports")
}

// portsOnHost says whether the DUT's tester-side interfaces are in this (the host's) network namespace.
func portsOnHost() bool {
	for _, p := range dutPorts {
		if _, err := net.InterfaceByName(p); err != nil {
			return false
		}
	}
	return true
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
			if why := testerCannotRun(cur); why != "" {
				t.Fatalf("%s: the tester cannot run: %s", tt.Name, why)
			}
			summary := ""
			if cur.Status.Progress != nil {
				summary = cur.Status.Progress.Summary
			}
			line := fmt.Sprintf("phase=%s progress=%q trials=%d", cur.Status.Phase, summary, cur.Status.TrialsMeasured)
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

// testerCannotRun says why a tester pod of the test is stuck (no image, bad config), or "".
func testerCannotRun(tt *v1alpha1.TrafficTest) string {
	var pods corev1.PodList
	if err := k8s.List(context.Background(), &pods, client.InNamespace(tt.Namespace), client.MatchingLabels{tester.LabelTest: tt.Name}); err != nil {
		return ""
	}
	for _, p := range pods.Items {
		for _, cs := range p.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil {
				switch w.Reason {
				case "ErrImageNeverPull", "ErrImagePull", "ImagePullBackOff", "InvalidImageName", "CreateContainerConfigError", "CreateContainerError":
					return fmt.Sprintf("pod %s: %s: %s", p.Name, w.Reason, w.Message)
				}
			}
		}
	}
	return ""
}

func finished(tt *v1alpha1.TrafficTest) bool {
	return tt.Status.Phase == v1alpha1.PhaseSucceeded || tt.Status.Phase == v1alpha1.PhaseFailed
}

// TestOperatorInstalledWithHelm: the chart installed the CRDs and a running operator.
func TestOperatorInstalledWithHelm(t *testing.T) {
	ctx := context.Background()
	for _, crd := range []string{"traffictests.linerate.dev", "imixprofiles.linerate.dev"} {
		c := &apiextensionsv1.CustomResourceDefinition{}
		if err := k8s.Get(ctx, client.ObjectKey{Name: crd}, c); err != nil {
			t.Fatalf("CRD %s: %v", crd, err)
		}
		established := false
		for _, cond := range c.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				established = true
			}
		}
		if !established {
			t.Errorf("CRD %s is not established", crd)
		}
	}
	var secrets corev1.SecretList
	if err := k8s.List(ctx, &secrets, client.InNamespace(operatorNS), client.MatchingLabels{"owner": "helm", "name": helmRelease}); err != nil {
		t.Fatal(err)
	}
	deployed := false
	for _, s := range secrets.Items {
		if s.Labels["status"] == "deployed" {
			deployed = true
		}
	}
	if !deployed {
		t.Errorf("no deployed Helm release %q in %s", helmRelease, operatorNS)
	}
	var deps appsv1.DeploymentList
	if err := k8s.List(ctx, &deps, client.InNamespace(operatorNS)); err != nil {
		t.Fatal(err)
	}
	if len(deps.Items) == 0 {
		t.Fatalf("no operator Deployment in %s", operatorNS)
	}
	for _, d := range deps.Items {
		if d.Status.AvailableReplicas < 1 {
			t.Errorf("Deployment %s has no available replica: %+v", d.Name, d.Status)
		}
	}
}

// TestSampleMeasuresTheDUT: the sample runs to the end on the real DUT; every frame size has a throughput
// that the DUT can really have (near its tbf rate when that is known), and the operator serves it on
// /metrics.
func TestSampleMeasuresTheDUT(t *testing.T) {
	tt := load(t, "e2e-sample", func(tt *v1alpha1.TrafficTest) {
		tt.Spec.FrameSizes = []int32{64, 1518}
	})
	done := wait(t, tt, 15*time.Minute, "the end", finished)
	if done.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("the sample failed: %+v", done.Status.Conditions)
	}
	r := done.Status.Results
	if r == nil || len(r.Throughput) == 0 {
		t.Fatalf("no throughput results: %+v", done.Status)
	}
	// every record, in the results ConfigMap and the segments sealed off it
	trials, err := results.ReadTrials(context.Background(), k8s, namespace, tt.Name)
	if err != nil || int32(len(trials)) != done.Status.TrialsMeasured {
		t.Errorf("results ConfigMap holds %d trials (%v), status counts %d", len(trials), err, done.Status.TrialsMeasured)
	}
	var bounds []string
	seen := map[string]bool{}
	for _, th := range r.Throughput {
		seen[fmt.Sprintf("%d/%s", th.FrameSize, th.Direction)] = true
		// On a loaded host the tester may spoil every trial near the NDR: the row is then a lower bound
		// (tester-limited, or undetermined where a pair's joint confirmation was spoiled), checked from above
		// only, and only where the records show trials the tester spoiled at its size.
		bound := th.TesterLimited || th.Undetermined != ""
		if bound {
			bounds = append(bounds, fmt.Sprintf("%d B %s", th.FrameSize, th.Direction))
			if spoiledThroughput(t, trials, th.FrameSize) == 0 {
				t.Errorf("%d B %s is a lower bound (tester-limited %v, undetermined %q), but no trial at %d B was spoiled by the tester",
					th.FrameSize, th.Direction, th.TesterLimited, th.Undetermined, th.FrameSize)
			}
		}
		// Plausible: the DUT forwarded something, not more than the line, and the L2 rate is the frame
		// rate times the frame size.
		if (th.NDR.FramesPerSecond <= 0 && !bound) || th.NDR.L1BitsPerSecond > r.LineRateBitsPerSecond || th.Trials == 0 {
			t.Errorf("implausible NDR at %d B %s: %+v", th.FrameSize, th.Direction, th.NDR)
		}
		if want := th.NDR.FramesPerSecond * int64(th.FrameSize) * 8; !near(th.NDR.L2BitsPerSecond, want, 0.01) {
			t.Errorf("%d B %s: L2 %d bit/s, but %d frames/s of %d B are %d bit/s", th.FrameSize, th.Direction,
				th.NDR.L2BitsPerSecond, th.NDR.FramesPerSecond, th.FrameSize, want)
		}
		truth := ""
		if dutTBFBps > 0 {
			// tbf counts the bytes the kernel sends: the frame without its 4 B FCS.
			capacity := float64(dutTBFBps) / float64((th.FrameSize-4)*8)
			ratio := float64(th.NDR.FramesPerSecond) / capacity
			truth = fmt.Sprintf(", %.2f of the DUT's %.0f frames/s", ratio, capacity)
			// Above the shaper's rate (plus its 32 KB burst within a short trial) nothing can pass without
			// loss; far below it, the tester or the search is wrong.
			if ratio > 1.1 || (ratio < 0.7 && !bound) {
				t.Errorf("%d B %s: NDR %d frames/s is %.2f of what the DUT forwards (%.0f frames/s)",
					th.FrameSize, th.Direction, th.NDR.FramesPerSecond, ratio, capacity)
			}
		}
		// the DUT's CPU is read by the tester pod from the node's cgroups: the router's cgroup holds no
		// process (the kernel forwards), so it used none
		if c := th.DUTCPU; dutCgroup != "" && !bound && (c == nil || c.CoresBusy != "0" || c.MicrosecondsPerThousandFrames != "") {
			t.Errorf("%d B %s: the DUT's CPU %+v, want 0 cores busy from %s's empty cgroup", th.FrameSize, th.Direction, c, dutCgroup)
		}
		t.Logf("NDR %d B %s: %d frames/s, %d bit/s L2 (%s%% of line), %d trials%s", th.FrameSize, th.Direction,
			th.NDR.FramesPerSecond, th.NDR.L2BitsPerSecond, th.NDR.PercentOfLineRate, th.Trials, truth)
	}
	// Directions are named "tx->rx" after the ports (internal/plan).
	for _, size := range tt.Spec.FrameSizes {
		for _, dir := range []string{"west->east", "east->west"} {
			if !seen[fmt.Sprintf("%d/%s", size, dir)] {
				t.Errorf("no throughput result for %d B %s (have %v)", size, dir, seen)
			}
		}
	}
	if len(r.Latency) == 0 && len(bounds) < len(r.Throughput) {
		t.Errorf("no latency results")
	}
	for _, l := range r.Latency {
		if l.Aggregate.Valid && (l.Aggregate.MinNs <= 0 || l.Aggregate.MinNs > l.Aggregate.MaxNs) {
			t.Errorf("implausible latency at %d B %s: %+v", l.FrameSize, l.Direction, l.Aggregate)
		}
	}
	if done.Status.TrialsMeasured == 0 || done.Status.Headline == "" {
		t.Errorf("status lacks trials/headline: %+v", done.Status)
	}

	// a row the tester limited is exported as linerate_throughput_tester_limited, never as the DUT's NDR
	metrics := scrapeOperator(t)
	want := fmt.Sprintf(`traffictest="%s"`, tt.Name)
	rows, limitedRows, undeterminedRows := 0, 0, 0
	for _, line := range strings.Split(metrics, "\n") {
		switch {
		case !strings.Contains(line, want):
		case strings.HasPrefix(line, "linerate_throughput_l2_bits_per_second{"):
			rows++
		case strings.HasPrefix(line, "linerate_throughput_tester_limited{"):
			limitedRows++
		case strings.HasPrefix(line, "linerate_throughput_undetermined{"):
			undeterminedRows++
		}
	}
	// an undetermined row has no NDR of the DUT's either: it is exported as undetermined, unless the tester
	// limited it, which says more
	limited, undetermined := 0, 0
	for _, row := range r.Throughput {
		switch {
		case row.TesterLimited:
			limited++
		case row.Undetermined != "":
			undetermined++
		}
	}
	limitedImix, undeterminedImix := 0, 0
	for _, row := range r.Imix {
		switch {
		case row.TesterLimited:
			limitedImix++
		case row.Undetermined != "":
			undeterminedImix++
		}
	}
	if rows != len(r.Throughput)-limited-undetermined || limitedRows != limited+limitedImix || undeterminedRows != undetermined+undeterminedImix {
		t.Errorf("the operator's /metrics has %d throughput rows, %d tester-limited and %d undetermined for %s; the status %d rows of which %d tester-limited, %d undetermined",
			rows, limitedRows, undeterminedRows, tt.Name, len(r.Throughput), limited+limitedImix, undetermined+undeterminedImix)
	}
	if len(bounds) > 0 && !t.Failed() {
		testenv.SkipForLoad(t, "checked from above only, the tester was the limit (or the NDR undetermined) on this loaded host: %v", bounds)
	}
}

// spoiledThroughput counts the throughput trials at a frame size the tester spoiled, each for a fault it
// named; any fault of any trial that a host short of CPU does not explain (engine.ExplainedByLoad) is a
// defect, and fails the test.
func spoiledThroughput(t *testing.T, trials []results.Trial, size int32) int {
	t.Helper()
	n := 0
	for _, tr := range trials {
		for _, f := range tr.TesterFaults {
			if !engine.ExplainedByLoad(f) {
				t.Errorf("trial %d: a fault no load explains: %s", tr.Seq, f)
			}
		}
		if tr.Test == v1alpha1.TestThroughput && tr.FrameSize == int(size) && tr.TesterLimited && len(tr.TesterFaults) > 0 {
			n++
		}
	}
	return n
}

func near(got, want int64, tolerance float64) bool {
	if want == 0 {
		return got == 0
	}
	d := float64(got-want) / float64(want)
	return d <= tolerance && d >= -tolerance
}

// TestImpossibleExpectationIsRefusedBeforeTheRun: an expectation above what the line carries (100 Gbit/s on
// the demo's 1G) is refused at planning, naming the field, and no tester pod takes the testbed.
func TestImpossibleExpectationIsRefusedBeforeTheRun(t *testing.T) {
	tt := load(t, "e2e-impossible", func(tt *v1alpha1.TrafficTest) {
		tt.Spec.Tests = []v1alpha1.TestKind{v1alpha1.TestThroughput}
		tt.Spec.FrameSizes = []int32{64}
		q := resourceQuantity(t, "100G")
		tt.Spec.Expectations = &v1alpha1.Expectations{MinThroughput: []v1alpha1.ThroughputExpectation{{L2BitsPerSecond: &q}}}
	})
	refused := wait(t, tt, 2*time.Minute, "PlanReady False", func(tt *v1alpha1.TrafficTest) bool {
		c := meta.FindStatusCondition(tt.Status.Conditions, v1alpha1.ConditionPlanReady)
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == v1alpha1.ReasonInvalidPlan
	})
	c := meta.FindStatusCondition(refused.Status.Conditions, v1alpha1.ConditionPlanReady)
	if !strings.Contains(c.Message, "spec.expectations.minThroughput[0].l2BitsPerSecond") || len(refused.Status.TesterPods) != 0 {
		t.Errorf("PlanReady %q, tester pods %v", c.Message, refused.Status.TesterPods)
	}
	t.Logf("refused: %s", c.Message)
}

// TestMissedExpectationFailsTheVerdict: an expectation the DUT (a 10 Mbit/s shaper) cannot meet but the line
// could (half the line rate) makes the verdict Failed with the failure listed. On a shared host the tester
// may spoil the trials just above the DUT's NDR and mark it tester-limited: then, and only then, the
// verdict is Inconclusive, every reason naming the tester limit (never Passed).
func TestMissedExpectationFailsTheVerdict(t *testing.T) {
	tt := load(t, "e2e-strict", func(tt *v1alpha1.TrafficTest) {
		tt.Spec.Tests = []v1alpha1.TestKind{v1alpha1.TestThroughput}
		tt.Spec.FrameSizes = []int32{64}
		tt.Spec.Expectations = &v1alpha1.Expectations{MinThroughput: []v1alpha1.ThroughputExpectation{{PercentOfLineRate: "50"}}}
	})
	done := wait(t, tt, 10*time.Minute, "the end", finished)
	if done.Status.Phase != v1alpha1.PhaseSucceeded || len(done.Status.Failures) == 0 {
		t.Fatalf("phase %s, verdict %s, failures %q: want a run that measured and a reason", done.Status.Phase, done.Status.Verdict, done.Status.Failures)
	}
	switch done.Status.Verdict {
	case v1alpha1.VerdictFailed:
		if !strings.HasPrefix(done.Status.Failures[0], "minThroughput 64 B") {
			t.Errorf("failures %q, want the 64 B throughput's", done.Status.Failures)
		}
		c := meta.FindStatusCondition(done.Status.Conditions, v1alpha1.ConditionExpectationsMet)
		if c == nil || c.Status != metav1.ConditionFalse {
			t.Errorf("ExpectationsMet: %+v", c)
		}
	case v1alpha1.VerdictInconclusive:
		// the tester's limit, or a pair's NDRs whose joint confirmation the tester spoiled (undetermined),
		// or a row with no figure at all for either reason (not measured)
		bound := map[string]bool{}
		if r := done.Status.Results; r != nil {
			for _, th := range r.Throughput {
				bound["not measured: throughput 64 B "+th.Direction] = th.TesterLimited || th.Undetermined != ""
			}
		}
		for _, f := range done.Status.Failures {
			if !strings.Contains(f, "(testerLimited)") && !strings.Contains(f, "but the NDR is undetermined (") && !bound[strings.TrimPrefix(f, "inconclusive: ")] {
				t.Errorf("Inconclusive for a reason other than the tester's limit: %q", f)
			}
		}
		trials, err := results.ReadTrials(context.Background(), k8s, namespace, tt.Name)
		if err != nil || spoiledThroughput(t, trials, 64) == 0 {
			t.Errorf("Inconclusive for the tester's limit, but no trial at 64 B was spoiled by the tester (%d records, %v)", len(trials), err)
		}
		if !t.Failed() {
			testenv.SkipForLoad(t, "Inconclusive, never Passed, for the tester's limit on this loaded host: the DUT's Failed was not shown (%q)", done.Status.Failures)
		}
	default:
		t.Fatalf("verdict %q, want Failed; failures %v", done.Status.Verdict, done.Status.Failures)
	}
	t.Logf("verdict %s: %v", done.Status.Verdict, done.Status.Failures)
}

// TestDeletingARunningTestRemovesItsPods: the tester pod goes with its TrafficTest, and host-device hands
// the ports back to the host.
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
			for time.Now().Before(deadline) && !portsOnHost() {
				time.Sleep(time.Second)
			}
			if !portsOnHost() {
				t.Fatalf("the DUT's ports %v did not come back to the host", dutPorts)
			}
			return
		}
		time.Sleep(2 * time.Second)
	}
	t.Fatal("the tester pod outlived its TrafficTest")
}

// TestKilledTesterKeepsMeasuredTrials: a tester that dies mid-run fails the test with a reason, and every
// trial measured before stays in the status and the results ConfigMap.
func TestKilledTesterKeepsMeasuredTrials(t *testing.T) {
	tt := load(t, "e2e-kill", nil)
	running := wait(t, tt, 10*time.Minute, "two trials", func(tt *v1alpha1.TrafficTest) bool { return tt.Status.TrialsMeasured >= 2 })
	if finished(running) {
		t.Fatalf("the test ended before the tester could be killed: %s", running.Status.Phase)
	}
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
	// every record, in the results ConfigMap and the segments sealed off it
	trials, err := results.ReadTrials(context.Background(), k8s, namespace, tt.Name)
	if err != nil || int32(len(trials)) < measured {
		t.Errorf("results ConfigMap holds %d trials (%v), want >= %d", len(trials), err, measured)
	}
	t.Logf("killed after %d trials: %s: %s", measured, c.Reason, c.Message)
}

// TestManagerRestartMidTestLosesNothing: the operator's pod is deleted mid-run; its replacement picks the
// test up, which ends with every trial counted once.
func TestManagerRestartMidTestLosesNothing(t *testing.T) {
	tt := load(t, "e2e-restart", nil)
	wait(t, tt, 10*time.Minute, "a trial", func(tt *v1alpha1.TrafficTest) bool { return tt.Status.TrialsMeasured >= 1 })
	ctx := context.Background()
	before := operatorPods(t)
	if len(before) == 0 {
		t.Fatalf("no operator pod in %s", operatorNS)
	}
	for i := range before {
		if err := k8s.Delete(ctx, &before[i]); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	// A new operator pod (another UID) must take over.
	deadline := time.Now().Add(3 * time.Minute)
	replaced := false
	for time.Now().Before(deadline) && !replaced {
		for _, p := range operatorPods(t) {
			old := false
			for _, b := range before {
				old = old || b.UID == p.UID
			}
			if !old && p.DeletionTimestamp == nil && podReady(&p) {
				replaced = true
			}
		}
		time.Sleep(2 * time.Second)
	}
	if !replaced {
		t.Fatal("no new operator pod became ready")
	}
	done := wait(t, tt, 15*time.Minute, "the end", finished)
	if done.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("after an operator restart: %s %+v", done.Status.Phase, done.Status.Conditions)
	}
	// every record, in the results ConfigMap and the segments sealed off it
	trials, err := results.ReadTrials(ctx, k8s, namespace, tt.Name)
	if err != nil || int32(len(trials)) != done.Status.TrialsMeasured {
		t.Errorf("status counts %d trials, the ConfigMap holds %d (%v)", done.Status.TrialsMeasured, len(trials), err)
	}
	if done.Status.Results == nil || len(done.Status.Results.Throughput) == 0 {
		t.Errorf("no throughput results after the restart")
	}
}

// operatorPods lists the pods of the operator's Deployments in the release namespace.
func operatorPods(t *testing.T) []corev1.Pod {
	t.Helper()
	ctx := context.Background()
	var deps appsv1.DeploymentList
	if err := k8s.List(ctx, &deps, client.InNamespace(operatorNS)); err != nil {
		t.Fatal(err)
	}
	var out []corev1.Pod
	for _, d := range deps.Items {
		sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		if err != nil {
			t.Fatal(err)
		}
		var pods corev1.PodList
		if err := k8s.List(ctx, &pods, client.InNamespace(operatorNS), client.MatchingLabelsSelector{Selector: sel}); err != nil {
			t.Fatal(err)
		}
		out = append(out, pods.Items...)
	}
	return out
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// scrapeOperator reads the operator's /metrics through kubectl port-forward on 127.0.0.1, to the Service
// of the release whose name says metrics.
func scrapeOperator(t *testing.T) string {
	t.Helper()
	var svcs corev1.ServiceList
	if err := k8s.List(context.Background(), &svcs, client.InNamespace(operatorNS)); err != nil {
		t.Fatal(err)
	}
	var svc *corev1.Service
	for i := range svcs.Items {
		if strings.Contains(svcs.Items[i].Name, "metrics") && len(svcs.Items[i].Spec.Ports) > 0 {
			svc = &svcs.Items[i]
		}
	}
	if svc == nil {
		t.Fatalf("no metrics Service in %s", operatorNS)
	}
	port := svc.Spec.Ports[0]
	scheme := "http"
	if port.Port == 8443 || port.Name == "https" {
		scheme = "https"
	}
	cmd := exec.Command(kubectl, "--kubeconfig", kubeconfig, "-n", operatorNS, "port-forward",
		"svc/"+svc.Name, "--address", "127.0.0.1", fmt.Sprintf(":%d", port.Port))
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
	local := ""
	for sc.Scan() {
		if _, after, ok := strings.Cut(sc.Text(), "127.0.0.1:"); ok {
			local, _, _ = strings.Cut(after, " ")
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	if local == "" {
		t.Fatal("kubectl port-forward printed no local port")
	}
	resp, err := http.Get(scheme + "://127.0.0.1:" + local + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
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
