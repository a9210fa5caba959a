package controllers

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"linerate.dev/linerate/api/v1alpha1"
)

// TrafficTestScheduleReconciler makes a TrafficTest from a schedule's template each time its cron
// schedule is due, points each run at the last passed one for comparison, and prunes old runs.
type TrafficTestScheduleReconciler struct {
	client.Client
	Scheme   *runtime.Scheme
	Recorder events.EventRecorder
	// Now is the clock (tests move it).
	Now func() time.Time
}

// +kubebuilder:rbac:groups=linerate.dev,resources=traffictestschedules,verbs=get;list;watch
// +kubebuilder:rbac:groups=linerate.dev,resources=traffictestschedules/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=linerate.dev,resources=traffictestschedules/finalizers,verbs=update
// +kubebuilder:rbac:groups=linerate.dev,resources=traffictests,verbs=create
// +kubebuilder:rbac:groups=linerate.dev,resources=imixprofiles,verbs=get;list;watch

type scheduleEvent struct{ typ, reason, action, note string }

// Reconcile brings one schedule's runs up to date, with one status write per pass and the events of the
// pass after it.
func (r *TrafficTestScheduleReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	s := &v1alpha1.TrafficTestSchedule{}
	if err := r.Get(ctx, req.NamespacedName, s); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !s.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // its runs are owned by it and go with it
	}
	before := s.Status.DeepCopy()
	var evs []scheduleEvent
	say := func(typ, reason, action, note string, args ...any) {
		evs = append(evs, scheduleEvent{typ, reason, action, fmt.Sprintf(note, args...)})
	}
	res, err := r.reconcile(ctx, s, say)
	if err == nil {
		s.Status.ObservedGeneration = s.Generation
	}
	summarizeSchedule(s)
	if !equality.Semantic.DeepEqual(before, &s.Status) {
		if uerr := r.Status().Update(ctx, s); uerr != nil {
			if apierrors.IsConflict(uerr) {
				return ctrl.Result{RequeueAfter: conflictRetry}, nil // as for a TrafficTest
			}
			return ctrl.Result{}, errors.Join(err, uerr)
		}
	}
	for _, e := range evs {
		r.Recorder.Eventf(s, nil, e.typ, e.reason, e.action, "%s", e.note)
	}
	return res, err
}

func (r *TrafficTestScheduleReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *TrafficTestScheduleReconciler) reconcile(ctx context.Context, s *v1alpha1.TrafficTestSchedule,
	say func(typ, reason, action, note string, args ...any)) (ctrl.Result, error) {
	st := &s.Status
	cs, err := parseSchedule(s.Spec.Schedule, s.Spec.TimeZone)
	if err != nil {
		setScheduleCondition(s, v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonInvalidSchedule, err.Error())
		st.NextScheduleTime = nil
		return ctrl.Result{}, nil
	}
	runs, err := r.runsOf(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	runs, err = r.prune(ctx, s, runs, say)
	if err != nil {
		return ctrl.Result{}, err
	}
	describeRuns(s, runs, comparableSpec(&s.Spec.Template.Spec))

	now := r.now()
	if s.Spec.Suspend {
		st.NextScheduleTime = nil
		setScheduleCondition(s, v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonSuspended, "suspended: no run starts until spec.suspend is false")
		return ctrl.Result{}, nil
	}
	if why, err := r.unplannableTemplate(ctx, s); err != nil {
		return ctrl.Result{}, err
	} else if why != "" {
		// every run of it would end Failed before measuring anything: none is made until the template (or
		// the ImixProfile it names) is fixed, and the due time it missed then starts as a missed run does
		st.NextScheduleTime = nil
		msg := "spec.template cannot be planned, so no run starts until it is fixed: " + why
		if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady); c == nil || c.Reason != v1alpha1.ReasonInvalidPlan || c.Message != msg {
			say(corev1.EventTypeWarning, v1alpha1.ReasonInvalidPlan, "Plan", "%s", msg)
		}
		setScheduleCondition(s, v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonInvalidPlan, msg)
		return ctrl.Result{}, nil
	}
	next := metav1.NewTime(cs.next(now))
	st.NextScheduleTime = &next
	wake := ctrl.Result{RequeueAfter: next.Sub(now) + time.Second}

	since := s.CreationTimestamp.Time
	if st.LastScheduleTime != nil {
		since = st.LastScheduleTime.Time
	}
	due, skipped, ok := cs.dueRun(since, now)
	if !ok {
		// what happened at the last due time (started, missed) stays readable until the next one
		if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady); c == nil || c.Status != metav1.ConditionTrue ||
			(c.Reason != v1alpha1.ReasonRunStarted && c.Reason != v1alpha1.ReasonRunMissed) || c.ObservedGeneration != s.Generation {
			setScheduleCondition(s, v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonScheduled, "next run at "+next.UTC().Format(time.RFC3339))
		}
		return wake, nil
	}
	if d := s.Spec.StartingDeadlineSeconds; d != nil && now.Sub(due) > time.Duration(*d)*time.Second {
		// too late: the slot is given up (a run that starts hours late measures at a time nobody chose)
		t := metav1.NewTime(due)
		st.LastScheduleTime = &t
		say(corev1.EventTypeWarning, v1alpha1.ReasonRunMissed, "Schedule", "Missed the run due at %s: it could not start within startingDeadlineSeconds (%ds)",
			due.UTC().Format(time.RFC3339), *d)
		setScheduleCondition(s, v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonRunMissed,
			fmt.Sprintf("missed the run due at %s (later than startingDeadlineSeconds); next run at %s", due.UTC().Format(time.RFC3339), next.UTC().Format(time.RFC3339)))
		return wake, nil
	}
	for i := range runs {
		if runs[i].Name == runName(s, due) {
			// made in an earlier pass: nothing is due, and nothing may be replaced for it. Either this pass
			// read a stale status (the cache lags the write; its own write then conflicts and says nothing),
			// or that pass's status write was refused: then this one records the start it could not
			if t := metav1.NewTime(due); st.LastScheduleTime == nil || st.LastScheduleTime.Before(&t) {
				return recordStart(s, runs[i].Name, due, skipped, next, say), nil
			}
			return wake, nil
		}
	}
	if len(st.Active) > 0 {
		switch s.Spec.ConcurrencyPolicy {
		case v1alpha1.ReplaceConcurrent:
			if err := r.cancelActive(ctx, runs, due, say); err != nil {
				return ctrl.Result{}, err
			}
		case v1alpha1.AllowConcurrent:
		default:
			msg := fmt.Sprintf("the run due at %s waits for %s to end (concurrencyPolicy Forbid)", due.UTC().Format(time.RFC3339), strings.Join(st.Active, ", "))
			setScheduleCondition(s, v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonRunWaits, msg)
			return wake, nil // the run's end wakes the schedule (it owns the run)
		}
	}
	name, err := r.startRun(ctx, s, due)
	if err != nil {
		return ctrl.Result{}, err
	}
	return recordStart(s, name, due, skipped, next, say), nil
}

// unplannableTemplate says why the schedule's template cannot be planned, as its runs' specs would be
// before they start ("" when it can, or when that cannot be told yet: an ImixProfile it names is missing,
// which a run waits for).
func (r *TrafficTestScheduleReconciler) unplannableTemplate(ctx context.Context, s *v1alpha1.TrafficTestSchedule) (string, error) {
	tt := &v1alpha1.TrafficTest{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name},
		Spec: *s.Spec.Template.Spec.DeepCopy()}
	sp, err := planSpec(ctx, r.Client, tt, true)
	if sp.invalid == "" || err != nil {
		return "", err
	}
	// the fields it names are the template's: spec.frameSizes is spec.template.spec.frameSizes here
	why := templateFields.ReplaceAllString(sp.invalid, "${1}spec.template.spec.")
	if im := tt.Spec.Imix; im != nil && im.ProfileRef != nil && strings.HasPrefix(sp.invalid, "spec.imix") {
		// what is wrong is in the profile, or in the template's DUT the profile does not fit
		why = fmt.Sprintf("ImixProfile %s (spec.template.spec.imix.profileRef): %s", im.ProfileRef.Name, why)
	}
	return why, nil
}

var templateFields = regexp.MustCompile(`(^|[\s(])spec\.`)

// recordStart writes a run's start into the schedule's status and says it.
func recordStart(s *v1alpha1.TrafficTestSchedule, name string, due time.Time, skipped int, next metav1.Time,
	say func(typ, reason, action, note string, args ...any)) ctrl.Result {
	st := &s.Status
	t := metav1.NewTime(due)
	st.LastScheduleTime = &t
	st.RunsStarted++
	note := fmt.Sprintf("Started run %s (due at %s)", name, due.UTC().Format(time.RFC3339))
	if st.LastPassedRun != "" {
		note += ", compared with " + st.LastPassedRun
	}
	if skipped > 0 {
		note += fmt.Sprintf("; %d earlier due time(s) were passed over", skipped)
	}
	say(corev1.EventTypeNormal, v1alpha1.ReasonRunStarted, "Schedule", "%s", note)
	setScheduleCondition(s, v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonRunStarted, note+"; next run at "+next.UTC().Format(time.RFC3339))
	// read the runs again next pass (the cache may not hold the new one yet)
	return ctrl.Result{RequeueAfter: time.Second}
}

// runsOf lists the schedule's runs, newest due first.
func (r *TrafficTestScheduleReconciler) runsOf(ctx context.Context, s *v1alpha1.TrafficTestSchedule) ([]v1alpha1.TrafficTest, error) {
	var list v1alpha1.TrafficTestList
	if err := r.List(ctx, &list, client.InNamespace(s.Namespace), client.MatchingLabels{v1alpha1.LabelSchedule: s.Name}); err != nil {
		return nil, err
	}
	var out []v1alpha1.TrafficTest
	for _, tt := range list.Items {
		if metav1.IsControlledBy(&tt, s) && tt.DeletionTimestamp.IsZero() {
			out = append(out, tt)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := scheduledTime(&out[i]), scheduledTime(&out[j])
		if !a.Equal(b) {
			return a.After(b)
		}
		return out[i].Name > out[j].Name
	})
	return out, nil
}

func scheduledTime(tt *v1alpha1.TrafficTest) time.Time {
	if t, err := time.Parse(time.RFC3339, tt.Annotations[v1alpha1.AnnotationScheduledTime]); err == nil {
		return t
	}
	return tt.CreationTimestamp.Time
}

// passed says whether a run is a baseline for the next: it finished and met its expectations (or had
// none). Failed, inconclusive and unfinished runs never are.
func passed(tt *v1alpha1.TrafficTest) bool {
	return tt.Status.Phase == v1alpha1.PhaseSucceeded &&
		(tt.Status.Verdict == v1alpha1.VerdictPassed || tt.Status.Verdict == v1alpha1.VerdictNone)
}

// maxListedRuns bounds status.runs.
const maxListedRuns = 200

// prune deletes the finished runs beyond the history limits, oldest first; the newest passed run is
// always kept (the limit is at least 1), as the next run compares with it.
func (r *TrafficTestScheduleReconciler) prune(ctx context.Context, s *v1alpha1.TrafficTestSchedule, runs []v1alpha1.TrafficTest,
	say func(typ, reason, action, note string, args ...any)) ([]v1alpha1.TrafficTest, error) {
	keepPassed, keepFailed := int32(3), int32(3)
	if l := s.Spec.PassedRunsHistoryLimit; l != nil {
		keepPassed = max(*l, 1)
	}
	if l := s.Spec.FailedRunsHistoryLimit; l != nil {
		keepFailed = *l
	}
	// a run still under way is compared with its previousRun when it ends: that one stays until then
	baselines := map[string]bool{}
	for i := range runs {
		if pr := runs[i].Spec.PreviousRun; pr != nil && !finished(runs[i].Status.Phase) {
			baselines[pr.Name] = true
		}
	}
	var kept []v1alpha1.TrafficTest
	var nPassed, nFailed int32
	for i := range runs {
		tt := &runs[i]
		drop := false
		switch {
		case !finished(tt.Status.Phase):
		case passed(tt):
			nPassed++
			drop = nPassed > keepPassed
		default:
			nFailed++
			drop = nFailed > keepFailed
		}
		if !drop || baselines[tt.Name] {
			kept = append(kept, *tt)
			continue
		}
		if err := r.Delete(ctx, tt, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return nil, err
		}
		say(corev1.EventTypeNormal, v1alpha1.ReasonRunPruned, "Prune", "Deleted run %s (%s, verdict %s): beyond the history limit", tt.Name, tt.Status.Phase, tt.Status.Verdict)
	}
	return kept, nil
}

// describeRuns fills the status from the runs (newest first). The last passed run is the newest passed
// run that measured what the template measures now (comparableSpec): after a template change, the first run of the new
// template has nothing to compare with rather than a run of another test. A cancelled run (Replace) neither
// passed nor failed.
func describeRuns(s *v1alpha1.TrafficTestSchedule, runs []v1alpha1.TrafficTest, measures string) {
	st := &s.Status
	st.Active, st.Runs, st.LastRun, st.LastPassedRun = nil, nil, nil, ""
	var newest *v1alpha1.TrafficTest // the newest run that ended on its own
	for i := range runs {
		tt := &runs[i]
		t := metav1.NewTime(scheduledTime(tt))
		run := v1alpha1.ScheduledRun{Name: tt.Name, ScheduledTime: &t, Phase: tt.Status.Phase, Verdict: tt.Status.Verdict,
			Headline: tt.Status.Headline, Cancelled: tt.Spec.Cancel}
		if res := tt.Status.Results; res != nil {
			run.ComparedWith = res.ComparedWith
		}
		if len(st.Runs) < maxListedRuns {
			st.Runs = append(st.Runs, run)
		}
		if !finished(tt.Status.Phase) {
			st.Active = append(st.Active, tt.Name)
			continue
		}
		if st.LastPassedRun == "" && passed(tt) && comparableSpec(&tt.Spec) == measures {
			st.LastPassedRun = tt.Name
		}
		if newest == nil && !tt.Spec.Cancel {
			newest = tt
		}
	}
	if len(st.Runs) > 0 {
		last := st.Runs[0]
		st.LastRun = &last
	}
	switch {
	case newest == nil:
		setScheduleCondition(s, v1alpha1.ConditionLastRunPassed, metav1.ConditionUnknown, v1alpha1.ReasonNoRunYet, "no run has finished yet")
	case passed(newest):
		setScheduleCondition(s, v1alpha1.ConditionLastRunPassed, metav1.ConditionTrue, v1alpha1.ReasonPassed, newest.Name+" passed: "+newest.Status.Headline)
	default:
		msg := fmt.Sprintf("%s ended %s with verdict %s", newest.Name, newest.Status.Phase, newest.Status.Verdict)
		why := slices.Clone(newest.Status.Failures)
		if c := meta.FindStatusCondition(newest.Status.Conditions, v1alpha1.ConditionFailed); c != nil && c.Status == metav1.ConditionTrue &&
			!strings.Contains(strings.Join(why, "; "), c.Message) {
			why = append([]string{c.Message}, why...) // why the run ended, which its verdict may not say
		}
		if len(why) > 0 {
			msg += ": " + strings.Join(why, "; ")
		}
		setScheduleCondition(s, v1alpha1.ConditionLastRunPassed, metav1.ConditionFalse, v1alpha1.ReasonRunFailed, msg)
	}
}

// cancelActive ends the running runs with spec.cancel (phase Failed, reason Cancelled, what they measured
// kept) so the due one can take the testbed.
func (r *TrafficTestScheduleReconciler) cancelActive(ctx context.Context, runs []v1alpha1.TrafficTest, due time.Time,
	say func(typ, reason, action, note string, args ...any)) error {
	for i := range runs {
		tt := &runs[i]
		if finished(tt.Status.Phase) || tt.Spec.Cancel {
			continue
		}
		patch := client.MergeFrom(tt.DeepCopy())
		tt.Spec.Cancel = true
		if err := r.Patch(ctx, tt, patch); client.IgnoreNotFound(err) != nil {
			return err
		}
		say(corev1.EventTypeNormal, v1alpha1.ReasonRunReplaced, "Schedule", "Cancelled run %s for the run due at %s (concurrencyPolicy Replace); its measured results are kept",
			tt.Name, due.UTC().Format(time.RFC3339))
	}
	return nil
}

// runName is unique per due time, so a run made just before a crash is found, not made twice.
func runName(s *v1alpha1.TrafficTestSchedule, due time.Time) string {
	return fmt.Sprintf("%s-%d", s.Name, due.Unix()/60)
}

// startRun makes the TrafficTest for the run due at due, compared with the last passed run.
func (r *TrafficTestScheduleReconciler) startRun(ctx context.Context, s *v1alpha1.TrafficTestSchedule, due time.Time) (string, error) {
	tmpl := s.Spec.Template.DeepCopy()
	tt := &v1alpha1.TrafficTest{ObjectMeta: metav1.ObjectMeta{
		Namespace: s.Namespace, Name: runName(s, due),
		Labels: tmpl.Metadata.Labels, Annotations: tmpl.Metadata.Annotations,
	}, Spec: tmpl.Spec}
	if tt.Labels == nil {
		tt.Labels = map[string]string{}
	}
	if tt.Annotations == nil {
		tt.Annotations = map[string]string{}
	}
	tt.Labels[v1alpha1.LabelSchedule] = s.Name
	tt.Annotations[v1alpha1.AnnotationScheduledTime] = due.UTC().Format(time.RFC3339)
	tt.Spec.PreviousRun = nil
	if tc := tt.Spec.Tester.Calibration; s.Status.LastPassedRun != "" && (tc == nil || !tc.Measure) {
		// (a calibration run measures the tester and compares with nothing: the API server refuses one)
		tt.Spec.PreviousRun = &v1alpha1.LocalTestReference{Name: s.Status.LastPassedRun}
	}
	if err := controllerutil.SetControllerReference(s, tt, r.Scheme); err != nil {
		return "", err
	}
	if err := r.Create(ctx, tt); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			return "", fmt.Errorf("creating run %s: %w", tt.Name, err)
		}
		// made by an earlier pass (found by its name), or somebody else's test of that name
		other := &v1alpha1.TrafficTest{}
		if err := r.Get(ctx, client.ObjectKeyFromObject(tt), other); err != nil {
			return "", err
		}
		if !metav1.IsControlledBy(other, s) {
			return "", fmt.Errorf("a TrafficTest %s that this schedule did not make is in the way of its run due at %s: rename or delete it",
				tt.Name, due.UTC().Format(time.RFC3339))
		}
		logf.FromContext(ctx).Info("run already made", "run", tt.Name)
	}
	return tt.Name, nil
}

func setScheduleCondition(s *v1alpha1.TrafficTestSchedule, typ string, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&s.Status.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg, ObservedGeneration: s.Generation})
}

// summarizeSchedule gives the schedule the conditions kstatus reads: it is Stalled when its schedule cannot
// be read or its template cannot be planned, and never Reconciling for long (it waits on a clock, which is
// its goal state).
func summarizeSchedule(s *v1alpha1.TrafficTestSchedule) {
	ready := meta.FindStatusCondition(s.Status.Conditions, v1alpha1.ConditionReady)
	if ready != nil && ready.Status == metav1.ConditionFalse {
		setScheduleCondition(s, v1alpha1.ConditionStalled, metav1.ConditionTrue, ready.Reason, ready.Message)
	} else {
		meta.RemoveStatusCondition(&s.Status.Conditions, v1alpha1.ConditionStalled)
	}
	meta.RemoveStatusCondition(&s.Status.Conditions, v1alpha1.ConditionReconciling)
}

// SetupWithManager registers the reconciler: a run's change wakes its schedule, and so does a change of
// an ImixProfile its template names (a template it made unplannable may be plannable again).
func (r *TrafficTestScheduleReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.TrafficTestSchedule{}).
		Owns(&v1alpha1.TrafficTest{}).
		Watches(&v1alpha1.ImixProfile{}, handler.EnqueueRequestsFromMapFunc(r.schedulesUsingProfile)).
		Named("traffictestschedule").
		Complete(r)
}

func (r *TrafficTestScheduleReconciler) schedulesUsingProfile(ctx context.Context, obj client.Object) []reconcile.Request {
	var list v1alpha1.TrafficTestScheduleList
	if err := r.List(ctx, &list, client.InNamespace(obj.GetNamespace())); err != nil {
		logf.FromContext(ctx).Error(err, "listing the schedules that may name an ImixProfile", "profile", obj.GetName())
		return nil
	}
	var out []reconcile.Request
	for _, s := range list.Items {
		if im := s.Spec.Template.Spec.Imix; im != nil && im.ProfileRef != nil && im.ProfileRef.Name == obj.GetName() {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&s)})
		}
	}
	return out
}
