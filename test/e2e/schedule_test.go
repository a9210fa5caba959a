//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/results"
	"linerate.dev/linerate/internal/testenv"
)

// TestScheduleComparesTheSecondRunWithTheFirst: a schedule due every minute makes two runs against the
// same DUT; the second is compared with the first. The DUT's truth did not change between them (tbf at
// E2E_DUT_RATE), so the NDR change must be small, and a 30 % maxNDRDrop passes.
func TestScheduleComparesTheSecondRunWithTheFirst(t *testing.T) {
	ctx := context.Background()
	tmpl := demoTest(t, "", func(tt *v1alpha1.TrafficTest) {
		tt.Spec.Tests = []v1alpha1.TestKind{v1alpha1.TestThroughput}
		tt.Spec.FrameSizes = []int32{512}
		tt.Spec.Traffic.Direction = v1alpha1.Unidirectional
		tt.Spec.Expectations = &v1alpha1.Expectations{MaxNDRDrop: "30"}
	})
	s := &v1alpha1.TrafficTestSchedule{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "e2e-every-minute"},
		Spec: v1alpha1.TrafficTestScheduleSpec{Schedule: "* * * * *",
			Template: v1alpha1.TrafficTestTemplate{Spec: tmpl.Spec}},
	}
	waitPortsFree(t)
	if err := k8s.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = k8s.Delete(context.Background(), s, client.PropagationPolicy(metav1.DeletePropagationForeground))
		waitPortsFree(t)
	})

	// the runs, oldest first, once two have finished
	var runs []v1alpha1.TrafficTest
	deadline := time.Now().Add(10 * time.Minute)
	for {
		var list v1alpha1.TrafficTestList
		if err := k8s.List(ctx, &list, client.InNamespace(namespace), client.MatchingLabels{v1alpha1.LabelSchedule: s.Name}); err != nil {
			t.Fatal(err)
		}
		runs = list.Items
		sort.Slice(runs, func(i, j int) bool { return runs[i].Name < runs[j].Name })
		done := 0
		var line []string
		for i := range runs {
			if finished(&runs[i]) {
				done++
			}
			line = append(line, runs[i].Name+"="+string(runs[i].Status.Phase))
		}
		if len(runs) >= 2 && finished(&runs[0]) && finished(&runs[1]) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("two finished runs within 10 minutes: %v", line)
		}
		for i := range runs {
			if why := testerCannotRun(&runs[i]); why != "" {
				t.Fatalf("%s: the tester cannot run: %s", runs[i].Name, why)
			}
		}
		time.Sleep(3 * time.Second)
	}
	first, second := runs[0], runs[1]
	// On a loaded host the tester may spoil every trial near a run's NDR: that row is then a lower bound
	// (tester-limited or undetermined), and no change between the runs is the DUT's. Such a run must show
	// throughput trials the tester spoiled, and must not have Failed; the comparison is then checked no
	// further (the test skips).
	bound := func(run *v1alpha1.TrafficTest) string {
		res := run.Status.Results
		if res == nil || len(res.Throughput) != 1 {
			t.Fatalf("%s: %s, throughput %+v", run.Name, run.Status.Phase, res)
		}
		row := res.Throughput[0]
		if !row.TesterLimited && row.Undetermined == "" {
			return ""
		}
		if trials, err := results.ReadTrials(ctx, k8s, namespace, run.Name); err != nil || spoiledThroughput(t, trials, 512) == 0 {
			t.Errorf("%s: the NDR is a lower bound, but no throughput trial at 512 B was spoiled by the tester (%d records, %v)", run.Name, len(trials), err)
		}
		if run.Status.Verdict == v1alpha1.VerdictFailed {
			t.Errorf("%s: Failed on a lower bound of the NDR: %v", run.Name, run.Status.Failures)
		}
		return fmt.Sprintf("%s: NDR %d frames/s, tester-limited %v, undetermined %q, verdict %s", run.Name, row.NDR.FramesPerSecond, row.TesterLimited, row.Undetermined, run.Status.Verdict)
	}
	skipFor := func(why string) {
		if !t.Failed() {
			testenv.SkipForLoad(t, "the comparison is checked no further, the tester was the limit on this loaded host: %s", why)
		}
		t.FailNow()
	}
	if first.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("first run %s: %s %v", first.Name, first.Status.Phase, first.Status.Conditions)
	}
	if why := bound(&first); why != "" {
		skipFor(why)
	}
	// the first has nothing to compare with: no expectation to judge, Passed
	if first.Status.Phase != v1alpha1.PhaseSucceeded || first.Status.Verdict != v1alpha1.VerdictPassed || first.Spec.PreviousRun != nil {
		t.Fatalf("first run %s: %s, verdict %s %v, previousRun %v", first.Name, first.Status.Phase, first.Status.Verdict, first.Status.Failures, first.Spec.PreviousRun)
	}
	if second.Spec.PreviousRun == nil || second.Spec.PreviousRun.Name != first.Name {
		t.Fatalf("second run %s compares with %v, want %s", second.Name, second.Spec.PreviousRun, first.Name)
	}
	r := second.Status.Results
	why := bound(&second)
	if r.ComparedWith != first.Name || len(r.Change) != 1 || r.Change[0].FrameSize != 512 || r.Change[0].TesterLimited != (why != "") {
		t.Fatalf("second run's change: %+v (lower bound: %q)", r, why)
	}
	if why != "" {
		skipFor(why)
	}
	change, _ := strconv.ParseFloat(r.Change[0].NDRPercent, 64)
	t.Logf("%s vs %s: NDR %s -> %s frames/s, change %s%% (%d bit/s)", second.Name, first.Name,
		fmt.Sprint(first.Status.Results.Throughput[0].NDR.FramesPerSecond), fmt.Sprint(r.Throughput[0].NDR.FramesPerSecond),
		r.Change[0].NDRPercent, r.Change[0].NDRL2BitsPerSecond)
	if change < -15 || change > 15 {
		t.Errorf("the DUT did not change between the runs, but the NDR changed %s%%", r.Change[0].NDRPercent)
	}
	if second.Status.Verdict != v1alpha1.VerdictPassed {
		t.Errorf("second run: verdict %s %v, want Passed (maxNDRDrop 30)", second.Status.Verdict, second.Status.Failures)
	}

	cur := &v1alpha1.TrafficTestSchedule{}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(s), cur); err != nil {
		t.Fatal(err)
	}
	if cur.Status.RunsStarted < 2 || cur.Status.LastPassedRun == "" {
		t.Errorf("schedule status: %+v", cur.Status)
	}
	metrics := scrapeOperator(t)
	want := fmt.Sprintf(`schedule="%s"`, s.Name)
	found := false
	for _, line := range strings.Split(metrics, "\n") {
		if strings.HasPrefix(line, "linerate_schedule_throughput_l2_bits_per_second{") && strings.Contains(line, want) {
			found = true
		}
	}
	changed := false
	for _, line := range strings.Split(metrics, "\n") {
		if strings.HasPrefix(line, "linerate_schedule_ndr_change_ratio{") && strings.Contains(line, want) && strings.Contains(line, `frame_size="512"`) {
			changed = true
		}
	}
	if !found || !changed {
		t.Errorf("the operator's /metrics lacks linerate_schedule_throughput_l2_bits_per_second (%v) or linerate_schedule_ndr_change_ratio (%v) for %s",
			found, changed, s.Name)
	}
}
