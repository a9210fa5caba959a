package chart

import (
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// managerContainer is the manager Deployment's one container in rendered objects.
func managerContainer(t *testing.T, objs map[string]*unstructured.Unstructured) map[string]any {
	t.Helper()
	dep := objs["Deployment/linerate-controller-manager"]
	if dep == nil {
		t.Fatalf("no manager Deployment: %v", keys(objs))
	}
	return field(t, dep, "spec", "template", "spec", "containers").([]any)[0].(map[string]any)
}

// withoutVersionLabels drops the labels that carry the chart's version and appVersion, which a packaged chart
// changes by design.
func withoutVersionLabels(objs []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	for _, o := range objs {
		for _, path := range [][]string{{"metadata", "labels"}, {"spec", "template", "metadata", "labels"}} {
			labels, ok, _ := unstructured.NestedStringMap(o.Object, path...)
			if !ok {
				continue
			}
			delete(labels, "helm.sh/chart")
			delete(labels, "app.kubernetes.io/version")
			_ = unstructured.SetNestedStringMap(o.Object, labels, path...)
		}
	}
	return index(objs)
}

// hack/package-chart.sh (make push) packages the chart with the registry's images as its defaults: installed
// with no values, it runs REGISTRY/manager:TAG and names REGISTRY/tester:TAG, and is otherwise the chart of
// the checkout given those images. A SemVer tag is the chart's version; any other tag a pre-release of it.
func TestPackagedChartNamesThePushedImages(t *testing.T) {
	h := helmBin(t)
	for _, c := range []struct{ registry, tag, wantVersion string }{
		{"registry.example.com/linerate", "v1.2.3", "1.2.3"},
		{"127.0.0.1:25000/linerate", "e2e", "0.1.0-e2e"},
		{"ghcr.io/acme/linerate/", "v2.0.0-rc.1", "2.0.0-rc.1"},
	} {
		t.Run(c.tag, func(t *testing.T) {
			out := t.TempDir()
			cmd := exec.Command("bash", filepath.Join(root, "hack", "package-chart.sh"), c.registry, c.tag, out)
			cmd.Env = append(cmd.Environ(), "HELM="+h)
			tgz := strings.TrimSpace(string(run(t, cmd)))
			if want := filepath.Join(out, "linerate-"+c.wantVersion+".tgz"); tgz != want {
				t.Fatalf("packaged %q, want %q", tgz, want)
			}
			meta := string(run(t, exec.Command(h, "show", "chart", tgz)))
			if !strings.Contains(meta, "\nversion: "+c.wantVersion+"\n") || !strings.Contains(meta, "appVersion: "+c.tag+"\n") {
				t.Errorf("Chart.yaml of the package:\n%s", meta)
			}
			reg := strings.TrimSuffix(c.registry, "/")
			packaged := withoutVersionLabels(parse(t, run(t, exec.Command(h, "template", release, tgz, "--namespace", namespace))))
			mc := managerContainer(t, packaged)
			if mc["image"] != reg+"/manager:"+c.tag || !reflect.DeepEqual(mc["args"].([]any)[3], "--tester-image="+reg+"/tester:"+c.tag) {
				t.Errorf("the packaged chart runs %v with %v", mc["image"], mc["args"])
			}
			checkout := withoutVersionLabels(helmTemplate(t, "--set", strings.Join([]string{
				"image.repository=" + reg + "/manager", "image.tag=" + c.tag,
				"tester.image.repository=" + reg + "/tester", "tester.image.tag=" + c.tag}, ",")))
			if !reflect.DeepEqual(packaged, checkout) {
				t.Errorf("the packaged chart renders other objects than charts/linerate given the same images")
			}
		})
	}
	// the checkout's chart is left as it was
	mc := managerContainer(t, index(helmTemplate(t)))
	if mc["image"] != "linerate.dev/manager:dev" {
		t.Errorf("charts/linerate now runs %v", mc["image"])
	}
}

// hack/kustomize-images.sh (make deploy, make build-installer) renders config/default with the images given:
// the manager's image and its --tester-image change, nothing else; with the defaults it renders exactly
// config/default.
func TestKustomizeWithImages(t *testing.T) {
	render := func(manager, tester string) []*unstructured.Unstructured {
		return parse(t, run(t, exec.Command("bash", filepath.Join(root, "hack", "kustomize-images.sh"), manager, tester)))
	}
	base := kustomize(t, filepath.Join(root, "config", "default"))
	if got := render("linerate.dev/manager:dev", "linerate.dev/tester:dev"); !reflect.DeepEqual(index(got), index(base)) {
		t.Errorf("with the default images it differs from config/default")
	}
	const digest = "sha256:057dcc8e2fc350c8ea424d4cb9c2b265423438fffb12ebc978b8789b01a2cae5"
	for _, c := range []struct{ manager, tester string }{
		{"127.0.0.1:25000/linerate/manager:e2e", "127.0.0.1:25000/linerate/tester:e2e"},
		{"registry.example.com/lr/manager@" + digest, "registry.example.com/lr/tester@" + digest},
	} {
		got := index(render(c.manager, c.tester))
		mc := managerContainer(t, got)
		if mc["image"] != c.manager || !reflect.DeepEqual(mc["args"].([]any)[3], "--tester-image="+c.tester) {
			t.Errorf("%s, %s: the manager runs %v with %v", c.manager, c.tester, mc["image"], mc["args"])
		}
		// put the defaults back: everything else is config/default's
		mc["image"] = "linerate.dev/manager:dev"
		mc["args"].([]any)[3] = "--tester-image=linerate.dev/tester:dev"
		if !reflect.DeepEqual(got, index(base)) {
			t.Errorf("%s, %s: more than the two images differ from config/default", c.manager, c.tester)
		}
	}
	cmd := exec.Command("bash", filepath.Join(root, "hack", "kustomize-images.sh"), "registry.example.com/lr/manager", "x:1")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "has no tag or digest") {
		t.Errorf("a manager image without a tag: %v %s", err, out)
	}
}
