package controllers

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"linerate.dev/linerate/api/v1alpha1"
)

// testScheme knows Kubernetes' kinds and linerate's, for a fake client.
func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return scheme
}

// An event says what the status says: it is recorded after the status write that holds it, and not at
// all when that write fails (the pass is redone and says it then).
func TestEventsFollowTheStatusTheyDescribe(t *testing.T) {
	scheme := testScheme(t)
	tt := sriovTest(func(tt *v1alpha1.TrafficTest) { tt.Spec.Suspend = true })
	tt.Namespace, tt.Name, tt.UID, tt.Generation = "lab", "held", "uid-1", 1
	refuse := true
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(tt).WithStatusSubresource(tt).
		WithInterceptorFuncs(interceptor.Funcs{SubResourceUpdate: func(ctx context.Context, cl client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			if refuse {
				return apierrors.NewConflict(schema.GroupResource{Group: "linerate.dev", Resource: "traffictests"}, obj.GetName(), nil)
			}
			return cl.SubResource(sub).Update(ctx, obj, opts...)
		}}).Build()
	rec := events.NewFakeRecorder(10)
	r := &TrafficTestReconciler{Client: c, Scheme: scheme, Recorder: rec}
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(tt)}

	if _, err := r.Reconcile(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if n := len(rec.Events); n != 0 {
		t.Fatalf("%d event(s) recorded for a status that was never written: %s", n, <-rec.Events)
	}
	refuse = false
	if _, err := r.Reconcile(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	got := &v1alpha1.TrafficTest{}
	if err := c.Get(context.Background(), req.NamespacedName, got); err != nil || got.Status.Phase != v1alpha1.PhaseSuspended {
		t.Fatalf("status %+v (%v)", got.Status, err)
	}
	if n := len(rec.Events); n != 1 {
		t.Fatalf("%d events after the status was written, want the one Suspended event", n)
	}
	if e := <-rec.Events; e != "Normal Suspended Suspended by spec.suspend" {
		t.Errorf("event %q", e)
	}
}

// A schedule says it started a run after the status that records the start; when that write is refused,
// the next pass finds the run made and records the start then, once (it was lost before).
func TestScheduleEventsFollowTheStatusTheyDescribe(t *testing.T) {
	scheme := testScheme(t)
	s := nightly("lab", "nightly")
	s.UID, s.Generation = "uid-s", 1
	created := time.Date(2026, 11, 25, 1, 0, 0, 0, time.UTC)
	s.CreationTimestamp = metav1.NewTime(created)
	refuse := true
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(s).WithStatusSubresource(s).
		WithInterceptorFuncs(interceptor.Funcs{SubResourceUpdate: func(ctx context.Context, cl client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			if refuse {
				return apierrors.NewConflict(schema.GroupResource{Group: "linerate.dev", Resource: "traffictestschedules"}, obj.GetName(), nil)
			}
			return cl.SubResource(sub).Update(ctx, obj, opts...)
		}}).Build()
	rec := events.NewFakeRecorder(10)
	r := &TrafficTestScheduleReconciler{Client: c, Scheme: scheme, Recorder: rec,
		Now: func() time.Time { return created.Add(time.Hour + 30*time.Second) }} // 02:00:30, the run is due
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(s)}

	if _, err := r.Reconcile(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	var runs v1alpha1.TrafficTestList
	if err := c.List(context.Background(), &runs); err != nil || len(runs.Items) != 1 {
		t.Fatalf("runs %d (%v), want the one due", len(runs.Items), err)
	}
	if n := len(rec.Events); n != 0 {
		t.Fatalf("%d event(s) recorded for a status that was never written: %s", n, <-rec.Events)
	}
	refuse = false
	for range 2 {
		if _, err := r.Reconcile(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	got := &v1alpha1.TrafficTestSchedule{}
	if err := c.Get(context.Background(), req.NamespacedName, got); err != nil || got.Status.RunsStarted != 1 || got.Status.LastScheduleTime == nil {
		t.Fatalf("status %+v (%v), want the start recorded once", got.Status, err)
	}
	if n := len(rec.Events); n != 1 {
		t.Fatalf("%d events after the status was written, want the one RunStarted event", n)
	}
	if e := <-rec.Events; !strings.HasPrefix(e, "Normal RunStarted Started run "+runs.Items[0].Name) {
		t.Errorf("event %q", e)
	}
}

// A schedule whose template cannot be planned says so once, in a Warning after the status that records
// it, naming the template's field: every later pass finds the same reason and says nothing more.
func TestAStalledScheduleSaysWhyOnce(t *testing.T) {
	scheme := testScheme(t)
	s := nightly("lab", "nightly")
	s.UID, s.Generation = "uid-s", 1
	s.Spec.Template.Spec.FrameSizes = []int32{64, 9000}
	s.Spec.Template.Spec.DUT.MaxFrameSize = ptr(int32(1518))
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(s).WithStatusSubresource(s).Build()
	rec := events.NewFakeRecorder(10)
	r := &TrafficTestScheduleReconciler{Client: c, Scheme: scheme, Recorder: rec, Now: time.Now}
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(s)}
	for range 3 {
		if _, err := r.Reconcile(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	got := &v1alpha1.TrafficTestSchedule{}
	if err := c.Get(context.Background(), req.NamespacedName, got); err != nil {
		t.Fatal(err)
	}
	if st := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionStalled); st == nil || st.Reason != v1alpha1.ReasonInvalidPlan ||
		!strings.Contains(st.Message, "spec.template.spec.frameSizes") {
		t.Fatalf("conditions %+v, want Stalled InvalidPlan naming spec.template.spec.frameSizes", got.Status.Conditions)
	}
	if n := len(rec.Events); n != 1 {
		t.Fatalf("%d events in three passes, want one", n)
	}
	if e := <-rec.Events; !strings.HasPrefix(e, "Warning InvalidPlan spec.template cannot be planned") || !strings.Contains(e, "spec.template.spec.frameSizes") {
		t.Errorf("event %q", e)
	}
	var runs v1alpha1.TrafficTestList
	if err := c.List(context.Background(), &runs); err != nil || len(runs.Items) != 0 {
		t.Errorf("runs %d (%v) of a template that cannot be planned", len(runs.Items), err)
	}
}
