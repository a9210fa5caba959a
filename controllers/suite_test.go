package controllers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/testenv"
	"linerate.dev/linerate/internal/tester"
)

// These tests run the controllers against a real kube-apiserver and etcd (hack/build-k8s.sh builds them;
// KUBEBUILDER_ASSETS points at them). There is no kubelet: the tests play the kubelet and the tester by
// writing pod status and the results ConfigMap, exactly the objects the real ones write.

var (
	testEnv   *envtest.Environment
	cfg       *rest.Config
	k8sClient client.Client
	scheme    = runtime.NewScheme()
	nsCounter atomic.Int32
)

func TestMain(m *testing.M) {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1alpha1.AddToScheme(scheme))
	ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.Level(zapLevel())))
	var err error
	if testEnv, cfg, err = testenv.Start(filepath.Join("..", "config", "crd", "bases")); err != nil {
		fmt.Fprintln(os.Stderr, "starting envtest:", err)
		os.Exit(1)
	}
	if k8sClient, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	_ = testEnv.Stop()
	os.Exit(code)
}

func zapLevel() zapcore.Level {
	if os.Getenv("LINERATE_TEST_VERBOSE") != "" {
		return zapcore.DebugLevel
	}
	return zapcore.ErrorLevel
}

// Several managers run in one test process (the restart tests), so controller names repeat.
func ctrlConfigSkipNameValidation() config.Controller {
	skip := true
	return config.Controller{SkipNameValidation: &skip}
}

// manager is a running operator, as the manager binary runs it.
type manager struct {
	cancel context.CancelFunc
	done   chan struct{}
	clock  *fakeClock
}

type fakeClock struct{ offset atomic.Int64 }

func (c *fakeClock) Now() time.Time          { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *fakeClock) Advance(d time.Duration) { c.offset.Add(int64(d)) }

func startManager(t *testing.T) *manager {
	t.Helper()
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Cache:                  CacheOptions(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             ctrlConfigSkipNameValidation(),
	})
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{}
	r := &TrafficTestReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Scheme: mgr.GetScheme(), Recorder: mgr.GetEventRecorder("linerate"),
		Tester: tester.Options{Image: "linerate.dev/tester:test", ImagePullSecrets: []corev1.LocalObjectReference{{Name: "regcred"}}}, Now: clock.Now}
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	if err := (&TrafficTestScheduleReconciler{Client: mgr.GetClient(), Scheme: mgr.GetScheme(), Recorder: mgr.GetEventRecorder("linerate"),
		Now: clock.Now}).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	if err := (&ImixProfileReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &manager{cancel: cancel, done: make(chan struct{}), clock: clock}
	go func() {
		defer close(m.done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	t.Cleanup(m.stop)
	return m
}

func (m *manager) stop() {
	m.cancel()
	<-m.done
}

// namespace makes a fresh namespace for one test.
func namespace(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("t%d-%d", nsCounter.Add(1), time.Now().UnixNano()%100000)
	if err := k8sClient.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	// envtest runs no namespace controller and no garbage collector: the test's TrafficTests and their
	// tester pods go with it, so that a later test's are not queued behind them for the testbed they share
	// (a pod whose test is gone holds its testbed until it is, as in a cluster while the collector deletes
	// it: the pods go until none is left, including one a pass under way made as its test went)
	t.Cleanup(func() {
		ctx := context.Background()
		_ = k8sClient.DeleteAllOf(ctx, &v1alpha1.TrafficTestSchedule{}, client.InNamespace(name))
		_ = k8sClient.DeleteAllOf(ctx, &v1alpha1.TrafficTest{}, client.InNamespace(name))
		for quiet, tries := 0, 0; quiet < 3 && tries < 50; tries++ {
			_ = k8sClient.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(name))
			time.Sleep(100 * time.Millisecond)
			var left corev1.PodList
			if err := k8sClient.List(ctx, &left, client.InNamespace(name)); err == nil && len(left.Items) == 0 {
				quiet++
			} else {
				quiet = 0
			}
		}
	})
	return name
}

// eventually polls cond until it holds or the timeout passes.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second) // generous: make test-busy runs envtest beside CPU hogs
	last := ""
	for time.Now().Before(deadline) {
		ok, msg := cond()
		if ok {
			return
		}
		last = msg
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s; last seen: %s", what, last)
}

func getTest(t *testing.T, ns, name string) *v1alpha1.TrafficTest {
	t.Helper()
	tt := &v1alpha1.TrafficTest{}
	if err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, tt); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		t.Fatal(err)
	}
	return tt
}
