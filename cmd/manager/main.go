// Command manager runs the linerate operator: the TrafficTest and ImixProfile controllers and the
// results metrics.
package main

import (
	"crypto/tls"
	"flag"
	"os"
	"strings"
	// schedules name IANA time zones; the distroless image has no zoneinfo
	_ "time/tzdata"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/controllers"
	"linerate.dev/linerate/internal/metrics"
	"linerate.dev/linerate/internal/tester"
)

func main() {
	var (
		metricsAddr, probeAddr, testerImage, pullPolicy string
		leaderElect, secureMetrics                      bool
	)
	flag.StringVar(&metricsAddr, "metrics-bind-address", ":8080", "Address of the metrics endpoint (0 disables it).")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "Address of the health probes.")
	flag.BoolVar(&leaderElect, "leader-elect", false, "Elect a leader so only one manager reconciles.")
	flag.BoolVar(&secureMetrics, "metrics-secure", false, "Serve metrics over HTTPS with authn/authz.")
	flag.StringVar(&testerImage, "tester-image", os.Getenv("LINERATE_TESTER_IMAGE"), "Default tester image.")
	flag.StringVar(&pullPolicy, "tester-image-pull-policy", "IfNotPresent", "Pull policy of tester images.")
	var pullSecrets string
	flag.StringVar(&pullSecrets, "tester-image-pull-secrets", "", "Comma-separated Secrets, in each TrafficTest's namespace, that tester images are pulled with.")
	opts := zap.Options{}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	log := ctrl.Log.WithName("setup")

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1alpha1.AddToScheme(scheme))

	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme: scheme,
		Cache:  controllers.CacheOptions(),
		Metrics: metricsserver.Options{
			BindAddress:   metricsAddr,
			SecureServing: secureMetrics,
			// HTTP/2 is off: it is open to the "rapid reset" CVEs and metrics do not need it.
			TLSOpts: []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }},
		},
		HealthProbeBindAddress: probeAddr,
		LeaderElection:         leaderElect,
		LeaderElectionID:       "linerate.linerate.dev",
	})
	if err != nil {
		log.Error(err, "unable to create the manager")
		os.Exit(1)
	}
	if err := controllers.Setup(mgr, tester.Options{Image: testerImage, ImagePullPolicy: corev1.PullPolicy(pullPolicy),
		ImagePullSecrets: secretRefs(pullSecrets)}); err != nil {
		log.Error(err, "unable to set up the controllers")
		os.Exit(1)
	}
	ctrlmetrics.Registry.MustRegister(&metrics.ResultsCollector{Reader: mgr.GetClient()})
	utilruntime.Must(mgr.AddHealthzCheck("healthz", healthz.Ping))
	utilruntime.Must(mgr.AddReadyzCheck("readyz", healthz.Ping))
	log.Info("starting manager", "testerImage", testerImage)
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		log.Error(err, "manager stopped")
		os.Exit(1)
	}
}

// secretRefs are the Secrets a comma-separated list names (none for "").
func secretRefs(list string) []corev1.LocalObjectReference {
	var refs []corev1.LocalObjectReference
	for _, name := range strings.Split(list, ",") {
		if name = strings.TrimSpace(name); name != "" {
			refs = append(refs, corev1.LocalObjectReference{Name: name})
		}
	}
	return refs
}
