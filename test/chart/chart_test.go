// Package chart tests the Helm chart (charts/linerate) against the kustomize configuration (config/): the
// two ways of installing linerate must create the same objects, with the same RBAC rules and manager
// arguments, and the chart's copies of generated files must equal their sources.
//
// They run the real helm (bin/helm: `bash hack/install-tools.sh helm`, or $HELM) and kustomize (bin/kustomize,
// or `kubectl kustomize`), and skip with a message only when helm is not installed.
package chart

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

const release, namespace = "linerate", "linerate-system"

var root = func() string {
	r, _ := filepath.Abs("../..")
	return r
}()

func chartDir() string { return filepath.Join(root, "charts", "linerate") }

func findTool(t *testing.T, env, name string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		return p
	}
	if p := filepath.Join(root, "bin", name); isExec(p) {
		return p
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return ""
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

func helmBin(t *testing.T) string {
	t.Helper()
	h := findTool(t, "HELM", "helm")
	if h == "" {
		t.Skip("helm is not installed: run `bash hack/install-tools.sh helm` (bin/helm) or set HELM; make test installs it")
	}
	return h
}

// kustomize renders a kustomization with bin/kustomize, kustomize on PATH, or kubectl kustomize.
func kustomize(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	var cmd *exec.Cmd
	if k := findTool(t, "KUSTOMIZE", "kustomize"); k != "" {
		cmd = exec.Command(k, "build", dir)
	} else if k := findTool(t, "KUBECTL", "kubectl"); k != "" {
		cmd = exec.Command(k, "kustomize", dir)
	} else {
		t.Fatal("neither kustomize nor kubectl found: run `bash hack/install-tools.sh kustomize`")
	}
	return parse(t, run(t, cmd))
}

func helmTemplate(t *testing.T, args ...string) []*unstructured.Unstructured {
	t.Helper()
	cmd := exec.Command(helmBin(t), append([]string{"template", release, chartDir(), "--namespace", namespace}, args...)...)
	return parse(t, run(t, cmd))
}

func run(t *testing.T, cmd *exec.Cmd) []byte {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, stderr.String())
	}
	return out
}

func parse(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if err == io.EOF {
				break
			}
			t.Fatalf("decoding rendered YAML: %v", err)
		}
		if len(m) == 0 {
			continue
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
	return objs
}

func key(o *unstructured.Unstructured) string { return o.GetKind() + "/" + o.GetName() }

func index(objs []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	m := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		m[key(o)] = o
	}
	return m
}

func keys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func field(t *testing.T, o *unstructured.Unstructured, path ...string) any {
	t.Helper()
	v, ok, err := unstructured.NestedFieldNoCopy(o.Object, path...)
	if err != nil || !ok {
		t.Fatalf("%s: no field %s", key(o), strings.Join(path, "."))
	}
	return v
}

func TestHelmLint(t *testing.T) {
	h := helmBin(t)
	for _, args := range [][]string{
		{"lint", "--strict", chartDir()},
		{"lint", "--strict", chartDir(), "--set", "metrics.serviceMonitor.enabled=true,metrics.podMonitor.enabled=true,prometheusRule.enabled=true,grafana.dashboard.enabled=true"},
	} {
		out, err := exec.Command(h, args...).CombinedOutput()
		if err != nil {
			t.Errorf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// The chart with default values and release "linerate" creates exactly what `kustomize build config/default`
// creates (but the Namespace, which Helm's --create-namespace makes): same kinds and names, same RBAC rules,
// same manager container (image, command, args, ports, probes, resources, security context), same CRDs.
func TestChartMatchesKustomize(t *testing.T) {
	chart := index(helmTemplate(t))
	kust := index(kustomize(t, filepath.Join(root, "config", "default")))
	delete(kust, "Namespace/"+namespace)
	if !reflect.DeepEqual(keys(chart), keys(kust)) {
		t.Fatalf("objects differ:\n chart:     %v\n kustomize: %v", keys(chart), keys(kust))
	}
	for k, c := range chart {
		kz := kust[k]
		if c.GetNamespace() != kz.GetNamespace() {
			t.Errorf("%s: namespace %q (chart) vs %q (kustomize)", k, c.GetNamespace(), kz.GetNamespace())
		}
		switch c.GetKind() {
		case "ClusterRole", "Role":
			if !reflect.DeepEqual(normRules(field(t, c, "rules")), normRules(field(t, kz, "rules"))) {
				t.Errorf("%s: RBAC rules differ:\n chart:     %v\n kustomize: %v", k, field(t, c, "rules"), field(t, kz, "rules"))
			}
			agg := func(o *unstructured.Unstructured) map[string]string {
				l := map[string]string{}
				for n, v := range o.GetLabels() {
					if strings.HasPrefix(n, "rbac.authorization.k8s.io/") {
						l[n] = v
					}
				}
				return l
			}
			if !reflect.DeepEqual(agg(c), agg(kz)) {
				t.Errorf("%s: aggregation labels %v vs %v", k, agg(c), agg(kz))
			}
		case "ClusterRoleBinding", "RoleBinding":
			for _, f := range []string{"roleRef", "subjects"} {
				if !reflect.DeepEqual(field(t, c, f), field(t, kz, f)) {
					t.Errorf("%s: %s %v vs %v", k, f, field(t, c, f), field(t, kz, f))
				}
			}
		case "Deployment":
			cc := field(t, c, "spec", "template", "spec", "containers").([]any)
			kc := field(t, kz, "spec", "template", "spec", "containers").([]any)
			if len(cc) != 1 || len(kc) != 1 {
				t.Fatalf("%s: want one container each, got %d and %d", k, len(cc), len(kc))
			}
			for _, f := range []string{"name", "image", "imagePullPolicy", "command", "args", "ports", "livenessProbe", "readinessProbe", "resources", "securityContext"} {
				a, b := cc[0].(map[string]any)[f], kc[0].(map[string]any)[f]
				if !reflect.DeepEqual(a, b) {
					t.Errorf("%s: container %s differs:\n chart:     %v\n kustomize: %v", k, f, a, b)
				}
			}
			for _, f := range []string{"serviceAccountName", "securityContext", "terminationGracePeriodSeconds"} {
				a := field(t, c, "spec", "template", "spec", f)
				b := field(t, kz, "spec", "template", "spec", f)
				if !reflect.DeepEqual(a, b) {
					t.Errorf("%s: pod %s %v vs %v", k, f, a, b)
				}
			}
			if !reflect.DeepEqual(field(t, c, "spec", "replicas"), field(t, kz, "spec", "replicas")) {
				t.Errorf("%s: replicas differ", k)
			}
			// Its Service must select its pods.
			selectsPods(t, chart, c)
		case "Service":
			if !reflect.DeepEqual(field(t, c, "spec", "ports"), field(t, kz, "spec", "ports")) {
				t.Errorf("%s: ports %v vs %v", k, field(t, c, "spec", "ports"), field(t, kz, "spec", "ports"))
			}
		case "CustomResourceDefinition":
			if !reflect.DeepEqual(field(t, c, "spec"), field(t, kz, "spec")) {
				t.Errorf("%s: the chart's CRD spec differs from config/crd", k)
			}
			if c.GetAnnotations()["helm.sh/resource-policy"] != "keep" {
				t.Errorf("%s: missing helm.sh/resource-policy: keep", k)
			}
		case "ServiceAccount":
		default:
			t.Errorf("%s: kind not compared; extend the test", k)
		}
	}
}

func selectsPods(t *testing.T, objs map[string]*unstructured.Unstructured, dep *unstructured.Unstructured) {
	t.Helper()
	podLabels := dep.Object["spec"].(map[string]any)["template"].(map[string]any)["metadata"].(map[string]any)["labels"].(map[string]any)
	for _, o := range objs {
		if o.GetKind() != "Service" {
			continue
		}
		sel, _, _ := unstructured.NestedStringMap(o.Object, "spec", "selector")
		for k, v := range sel {
			if podLabels[k] != v {
				t.Errorf("%s selects %s=%s, the manager's pods have %v", key(o), k, v, podLabels)
			}
		}
	}
}

// normRules sorts each rule's lists and the rules, so that order (which RBAC ignores) does not matter.
func normRules(v any) []string {
	var out []string
	for _, r := range v.([]any) {
		m := r.(map[string]any)
		var parts []string
		for _, f := range []string{"apiGroups", "resources", "resourceNames", "nonResourceURLs", "verbs"} {
			var l []string
			for _, x := range asList(m[f]) {
				l = append(l, fmt.Sprint(x))
			}
			sort.Strings(l)
			parts = append(parts, f+"="+strings.Join(l, ","))
		}
		out = append(out, strings.Join(parts, ";"))
	}
	sort.Strings(out)
	return out
}

func asList(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	return nil
}

// The Prometheus Operator objects: the chart's ServiceMonitor scrapes what config/prometheus/monitor.yaml
// scrapes, and its PrometheusRule has config/prometheus/prometheusrule.yaml's groups.
func TestMonitoringMatchesConfig(t *testing.T) {
	chart := helmTemplate(t, "--set", "metrics.serviceMonitor.enabled=true,metrics.podMonitor.enabled=true,prometheusRule.enabled=true,grafana.dashboard.enabled=true")
	kust := kustomize(t, filepath.Join(root, "config", "prometheus"))
	byKind := func(objs []*unstructured.Unstructured, kind string) *unstructured.Unstructured {
		for _, o := range objs {
			if o.GetKind() == kind {
				return o
			}
		}
		t.Fatalf("no %s rendered", kind)
		return nil
	}
	sm, ksm := byKind(chart, "ServiceMonitor"), byKind(kust, "ServiceMonitor")
	if !reflect.DeepEqual(field(t, sm, "spec", "endpoints"), field(t, ksm, "spec", "endpoints")) {
		t.Errorf("ServiceMonitor endpoints %v vs %v", field(t, sm, "spec", "endpoints"), field(t, ksm, "spec", "endpoints"))
	}
	// The ServiceMonitor must select the chart's metrics Service.
	svc := byKind(chart, "Service")
	sel, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
	for k, v := range sel {
		if svc.GetLabels()[k] != v {
			t.Errorf("ServiceMonitor selects %s=%s; the metrics Service has %v", k, v, svc.GetLabels())
		}
	}
	pr, kpr := byKind(chart, "PrometheusRule"), byKind(kust, "PrometheusRule")
	if !reflect.DeepEqual(field(t, pr, "spec", "groups"), field(t, kpr, "spec", "groups")) {
		t.Errorf("PrometheusRule groups differ from config/prometheus/prometheusrule.yaml")
	}
	pm := byKind(chart, "PodMonitor")
	if l, _, _ := unstructured.NestedStringMap(pm.Object, "spec", "selector", "matchLabels"); l["app.kubernetes.io/name"] != "linerate-tester" {
		t.Errorf("PodMonitor selects %v, tester pods are app.kubernetes.io/name=linerate-tester (internal/tester)", l)
	}
	cm := byKind(chart, "ConfigMap")
	want, _ := os.ReadFile(filepath.Join(root, "config", "grafana", "linerate-dashboard.json"))
	if got, _, _ := unstructured.NestedString(cm.Object, "data", "linerate-dashboard.json"); strings.TrimSpace(got) != strings.TrimSpace(string(want)) {
		t.Errorf("the dashboard ConfigMap does not carry config/grafana/linerate-dashboard.json")
	}
}

// Values change what they say they change.
func TestValues(t *testing.T) {
	objs := index(helmTemplate(t, "--set", strings.Join([]string{
		"image.repository=reg.example/lr/manager", "image.tag=v9",
		"tester.image.repository=reg.example/lr/tester", "tester.image.tag=v9", "tester.image.pullPolicy=Always",
		"tester.imagePullSecrets={regcred,mirror}",
		"leaderElection=false", "replicas=2", "extraArgs={--zap-log-level=debug}",
		"crds.install=false", "rbac.userRoles=false", "metrics.service.enabled=false",
	}, ",")))
	dep := objs["Deployment/linerate-controller-manager"]
	if dep == nil {
		t.Fatalf("no manager Deployment: %v", keys(objs))
	}
	c := field(t, dep, "spec", "template", "spec", "containers").([]any)[0].(map[string]any)
	if c["image"] != "reg.example/lr/manager:v9" {
		t.Errorf("image %v", c["image"])
	}
	wantArgs := []any{"--health-probe-bind-address=:8081", "--metrics-bind-address=:8080",
		"--tester-image=reg.example/lr/tester:v9", "--tester-image-pull-policy=Always",
		"--tester-image-pull-secrets=regcred,mirror", "--zap-log-level=debug"}
	if !reflect.DeepEqual(c["args"], wantArgs) {
		t.Errorf("args %v, want %v", c["args"], wantArgs)
	}
	if fmt.Sprint(field(t, dep, "spec", "replicas")) != "2" {
		t.Errorf("replicas %v", field(t, dep, "spec", "replicas"))
	}
	for k := range objs {
		if strings.HasPrefix(k, "CustomResourceDefinition/") || strings.Contains(k, "traffictest-editor") || strings.HasPrefix(k, "Service/") {
			t.Errorf("%s rendered although disabled", k)
		}
	}

	// Another release name prefixes every name, and the bindings follow.
	other := index(parse(t, run(t, exec.Command(helmBin(t), "template", "bench", chartDir(), "--namespace", "perf"))))
	for k, o := range other {
		if o.GetKind() != "CustomResourceDefinition" && !strings.HasPrefix(o.GetName(), "bench-linerate-") {
			t.Errorf("%s: not prefixed with the release's full name", k)
		}
	}
	crb := other["ClusterRoleBinding/bench-linerate-manager-rolebinding"]
	if crb == nil {
		t.Fatalf("no ClusterRoleBinding: %v", keys(other))
	}
	subj := field(t, crb, "subjects").([]any)[0].(map[string]any)
	if subj["name"] != "bench-linerate-controller-manager" || subj["namespace"] != "perf" {
		t.Errorf("binding subject %v", subj)
	}
}

// The chart reads copies of generated files (Helm cannot read outside the chart); they must equal the
// sources. Fix: hack/sync-chart.sh.
func TestGeneratedCopiesInSync(t *testing.T) {
	gen := filepath.Join(chartDir(), "generated")
	pairs := map[string]string{
		filepath.Join(gen, "role.yaml"):               filepath.Join(root, "config", "rbac", "role.yaml"),
		filepath.Join(gen, "prometheusrule.yaml"):     filepath.Join(root, "config", "prometheus", "prometheusrule.yaml"),
		filepath.Join(gen, "linerate-dashboard.json"): filepath.Join(root, "config", "grafana", "linerate-dashboard.json"),
	}
	srcCRDs, _ := filepath.Glob(filepath.Join(root, "config", "crd", "bases", "*.yaml"))
	gotCRDs, _ := filepath.Glob(filepath.Join(gen, "crds", "*.yaml"))
	if len(srcCRDs) == 0 || len(srcCRDs) != len(gotCRDs) {
		t.Errorf("config/crd/bases has %d CRDs, the chart %d: run hack/sync-chart.sh", len(srcCRDs), len(gotCRDs))
	}
	for _, s := range srcCRDs {
		pairs[filepath.Join(gen, "crds", filepath.Base(s))] = s
	}
	for copyPath, src := range pairs {
		a, err1 := os.ReadFile(copyPath)
		b, err2 := os.ReadFile(src)
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs from %s (or is missing): run hack/sync-chart.sh", rel(copyPath), rel(src))
		}
	}
}

func rel(p string) string {
	r, err := filepath.Rel(root, p)
	if err != nil {
		return p
	}
	return r
}
