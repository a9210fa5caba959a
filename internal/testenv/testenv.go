// Package testenv starts a real kube-apiserver and etcd (controller-runtime's envtest) for the tests
// that talk to an API server. make test builds both from the Go module proxy (hack/build-k8s.sh) and
// points KUBEBUILDER_ASSETS at them; nothing here is ever a fake client.
package testenv

import (
	"errors"
	"os"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
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

// ForTest starts an API server for one test, skips the test when none can start here, and stops it
// when the test ends. It returns the server's config and a client for its built-in kinds.
func ForTest(t testing.TB) (*rest.Config, client.Client) {
	t.Helper()
	if why := Missing(); why != "" {
		t.Skip(why)
	}
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
