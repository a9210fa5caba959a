// Package testenv is what the tests know of the environment they run in. It starts a real kube-apiserver
// and etcd (controller-runtime's envtest) for the tests that talk to an API server: make test builds both
// from the Go module proxy (hack/build-k8s.sh) and points KUBEBUILDER_ASSETS at them; nothing here is ever
// a fake client. And it decides what a test that could not show its truth on a loaded host does.
package testenv

import (
	"errors"
	"os"
	"sync"
	"testing"

	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// Missing says why no API server can start, or "" when one can.
func Missing() string {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		return "KUBEBUILDER_ASSETS is not set: run the tests with `make test` (it builds a real kube-apiserver and etcd with hack/build-k8s.sh)"
	}
	return ""
}

// Start starts an API server with the CRDs of crdDirs installed (none: built-in kinds only). The
// caller stops it; on error everything it started is already stopped.
func Start(crdDirs ...string) (*envtest.Environment, *rest.Config, error) {
	if why := Missing(); why != "" {
		return nil, nil, errors.New(why)
	}
	env := &envtest.Environment{CRDDirectoryPaths: crdDirs, ErrorIfCRDPathMissing: len(crdDirs) > 0}
	cfg, err := env.Start()
	if err != nil {
		_ = env.Stop() // Start can fail after the processes are up (e.g. a CRD the server refuses)
		return nil, nil, err
	}
	return env, cfg, nil
}

var quietOnce sync.Once

// RequireCleanTester is the variable that turns a skip for a loaded host (SkipForLoad) into a failure. A
// shared or small host skips a truth the tester, honestly, could not show there, so a green suite there
// proves less: set this on a host whose tester has dedicated cores, where every truth must be shown.
const RequireCleanTester = "LINERATE_REQUIRE_CLEAN_TESTER"

// SkipForLoad skips a test whose truth the tester could not show because it spoiled the trials that truth
// needs on a loaded host, and said so. The caller has checked the evidence in the trial records first (a
// fault no load explains, or a spoiled trial without one, fails the test instead); where
// RequireCleanTester is set, the test fails here too.
func SkipForLoad(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv(RequireCleanTester) != "" {
		t.Fatalf("%s is set, but the tester spoiled what this test needed: "+format, append([]any{RequireCleanTester}, args...)...)
	}
	t.Skipf(format, args...)
}

// ForTest starts an API server for one test, skips the test when none can start here, and stops it
// when the test ends. It returns the server's config and a client for its built-in kinds.
func ForTest(t testing.TB) (*rest.Config, client.Client) {
	t.Helper()
	if why := Missing(); why != "" {
		t.Skip(why)
	}
	// With no logger set, controller-runtime prints a warning and a stack trace into the test's output,
	// where a reader of a failure looks first; its errors are kept (on stderr), its chatter is not. The
	// logger is the process's: set once, before any is handed out.
	quietOnce.Do(func() { ctrllog.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel))) })
	env, cfg, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return cfg, c
}
