//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/tester"
)

// The registry, the pushed images and the tools that read them back (hack/e2e.sh sets them):
//
//	E2E_REGISTRY            where `make push` pushed: E2E_REGISTRY/manager:E2E_IMAGE_TAG, .../tester, .../charts/linerate
//	E2E_IMAGE_TAG           the images' tag (and the chart's appVersion)
//	E2E_PUSHED              hack/push.sh's PUSHED_FILE: "manager|tester|chart REFERENCE DIGEST" lines
//	E2E_PUSHED_IMAGES       the image tarballs that were pushed (hack/build-images.sh's output)
//	E2E_REGISTRY_LOG        the registry's log, an access-log line per request (hack/registry.sh)
//	E2E_CRANE, E2E_HELM     bin/crane, helm
//	E2E_CTR, E2E_CONTAINERD_ADDRESS   the node's containerd, through its ctr
func requireEnv(t *testing.T, names ...string) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, n := range names {
		if env[n] = os.Getenv(n); env[n] == "" {
			t.Fatalf("%s is not set: hack/e2e.sh (make test-e2e) sets it when it pushes linerate to its registry", n)
		}
	}
	return env
}

// pushedArtifact is one line of hack/push.sh's PUSHED_FILE.
type pushedArtifact struct{ ref, digest string }

func readPushed(t *testing.T, path string) map[string]pushedArtifact {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]pushedArtifact{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("%s: %q is not 'WHAT REFERENCE DIGEST'", path, line)
		}
		out[f[0]] = pushedArtifact{ref: f[1], digest: f[2]}
	}
	return out
}

func output(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr)
	}
	return strings.TrimSpace(string(out))
}

// nodeImages lists the node's containerd images (ctr -n k8s.io images ls): name -> the digest it points at.
func nodeImages(t *testing.T, ctr, address string) map[string]string {
	t.Helper()
	images := map[string]string{}
	lines := strings.Split(output(t, ctr, "--address", address, "-n", "k8s.io", "images", "ls"), "\n")
	for _, line := range lines[1:] { // REF TYPE DIGEST SIZE PLATFORMS LABELS
		if f := strings.Fields(line); len(f) >= 3 {
			images[f[0]] = f[2]
		}
	}
	return images
}

// registryRequest is a request of an access-log line of the registry:
// `... "GET /v2/... HTTP/1.1" 200 428 "" "containerd/1.6.20~ds1"`.
type registryRequest struct{ method, path, status string }

var accessLogLine = regexp.MustCompile(`"(GET|HEAD) (/v2/\S*) HTTP/[0-9.]+" (\d{3}) \S+ "[^"]*" "([^"]*)"`)

// containerdRequests are the requests the node's containerd made to the registry.
func containerdRequests(t *testing.T, logPath string) map[registryRequest]bool {
	t.Helper()
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[registryRequest]bool{}
	for _, m := range accessLogLine.FindAllStringSubmatch(string(data), -1) {
		if strings.HasPrefix(m[4], "containerd/") {
			seen[registryRequest{method: m[1], path: m[2], status: m[3]}] = true
		}
	}
	return seen
}

// TestImagesArePulledByNameFromTheRegistry: linerate installed the way a real cluster installs it. hack/e2e.sh
// pushed both images and the chart to a registry on the loopback (make push), imported nothing into the node,
// and installed the chart from oci:// with no image values. The chart names the pushed images; the manager and
// a tester pod run them; the node's containerd holds them under the registry's names with the digests that
// were pushed (those of the tarballs that were built), and the registry's log shows containerd fetching every
// blob of both.
func TestImagesArePulledByNameFromTheRegistry(t *testing.T) {
	env := requireEnv(t, "E2E_REGISTRY", "E2E_IMAGE_TAG", "E2E_PUSHED", "E2E_PUSHED_IMAGES", "E2E_REGISTRY_LOG",
		"E2E_CRANE", "E2E_HELM", "E2E_CTR", "E2E_CONTAINERD_ADDRESS")
	crane, reg, tag := env["E2E_CRANE"], env["E2E_REGISTRY"], env["E2E_IMAGE_TAG"]
	pushed := readPushed(t, env["E2E_PUSHED"])

	// What was pushed is what was built, under the registry's names, and the registry still serves it.
	for _, image := range []string{"manager", "tester"} {
		p := pushed[image]
		if want := reg + "/" + image + ":" + tag; p.ref != want {
			t.Fatalf("pushed %s as %q, want %q", image, p.ref, want)
		}
		built := output(t, crane, "digest", "--tarball", filepath.Join(env["E2E_PUSHED_IMAGES"], image+".tar"))
		served := output(t, crane, "digest", p.ref)
		if built != p.digest || served != p.digest {
			t.Fatalf("%s: built %s, pushed %s, the registry serves %s", image, built, p.digest, served)
		}
	}
	// Nothing of linerate's was imported into the node: it holds no image under the names the tarballs carry.
	for name := range nodeImages(t, env["E2E_CTR"], env["E2E_CONTAINERD_ADDRESS"]) {
		if strings.HasPrefix(name, "linerate.dev/manager") || strings.HasPrefix(name, "linerate.dev/tester") {
			t.Fatalf("the node's containerd has %s: the images were imported, so nothing shows they can be pulled", name)
		}
	}

	// The release is the pushed chart (its version and appVersion are the push's, not charts/linerate's).
	chart, ok := pushed["chart"]
	if !ok || !strings.HasPrefix(chart.ref, "oci://"+reg+"/charts/linerate:") {
		t.Fatalf("no chart pushed to oci://%s/charts/linerate: %+v", reg, pushed)
	}
	chartVersion := chart.ref[strings.LastIndex(chart.ref, ":")+1:]
	var releases []struct {
		Name       string `json:"name"`
		Chart      string `json:"chart"`
		AppVersion string `json:"app_version"`
	}
	if err := json.Unmarshal([]byte(output(t, env["E2E_HELM"], "--kubeconfig", kubeconfig, "list", "-n", operatorNS, "-o", "json")), &releases); err != nil {
		t.Fatal(err)
	}
	installed := false
	for _, r := range releases {
		installed = installed || (r.Name == helmRelease && r.Chart == "linerate-"+chartVersion && r.AppVersion == tag)
	}
	if !installed {
		t.Fatalf("no release %s of chart linerate-%s (appVersion %s) in %s: %+v", helmRelease, chartVersion, tag, operatorNS, releases)
	}

	// The manager runs the pushed manager image, and names the pushed tester image as the default.
	managerRef, testerRef := pushed["manager"].ref, pushed["tester"].ref
	var deps appsv1.DeploymentList
	if err := k8s.List(context.Background(), &deps, client.InNamespace(operatorNS)); err != nil {
		t.Fatal(err)
	}
	if len(deps.Items) != 1 || len(deps.Items[0].Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("want one operator Deployment with one container in %s, got %d", operatorNS, len(deps.Items))
	}
	c := deps.Items[0].Spec.Template.Spec.Containers[0]
	if c.Image != managerRef || !slices.Contains(c.Args, "--tester-image="+testerRef) {
		t.Fatalf("the operator runs %s with %v; want %s and --tester-image=%s", c.Image, c.Args, managerRef, testerRef)
	}
	running := map[string]string{} // image -> the imageID the kubelet reports for a container running it
	for _, p := range operatorPods(t) {
		for _, cs := range p.Status.ContainerStatuses {
			if cs.ImageID != "" {
				running["manager"] = cs.ImageID
			}
		}
	}

	// A TrafficTest's tester pod runs the pushed tester image: wait until its container has one.
	tt := load(t, "e2e-pulled", func(tt *v1alpha1.TrafficTest) {
		tt.Spec.Tests = []v1alpha1.TestKind{v1alpha1.TestThroughput}
		tt.Spec.FrameSizes = []int32{64}
	})
	deadline := time.Now().Add(5 * time.Minute)
	for running["tester"] == "" && time.Now().Before(deadline) {
		cur := &v1alpha1.TrafficTest{}
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(tt), cur); err == nil {
			if why := testerCannotRun(cur); why != "" {
				t.Fatalf("the tester image was not pulled: %s", why)
			}
		}
		var pods corev1.PodList
		if err := k8s.List(context.Background(), &pods, client.InNamespace(namespace), client.MatchingLabels{tester.LabelTest: tt.Name}); err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items {
			for i, cs := range p.Status.ContainerStatuses {
				if cs.ImageID != "" {
					if img := p.Spec.Containers[i].Image; img != testerRef {
						t.Fatalf("tester pod %s runs %s, want the chart's default %s", p.Name, img, testerRef)
					}
					running["tester"] = cs.ImageID
				}
			}
		}
		time.Sleep(time.Second)
	}
	if running["tester"] == "" {
		t.Fatalf("no container of %s's tester pods started within 5 minutes", tt.Name)
	}

	node := nodeImages(t, env["E2E_CTR"], env["E2E_CONTAINERD_ADDRESS"])
	fetched := containerdRequests(t, env["E2E_REGISTRY_LOG"])
	for _, image := range []string{"manager", "tester"} {
		p := pushed[image]
		repo := strings.TrimSuffix(p.ref, ":"+tag)
		// the kubelet's imageID is the repository digest containerd pulled
		if want := repo + "@" + p.digest; running[image] != want {
			t.Errorf("%s: the running container's imageID is %q, want %q", image, running[image], want)
		}
		// ctr on the node: the name points at the pushed digest
		if got := node[p.ref]; got != p.digest {
			t.Errorf("%s: the node's containerd has %s at %q, the registry %s", image, p.ref, got, p.digest)
		} else {
			t.Logf("%s: pushed %s; node's containerd: %s %s", image, p.digest, p.ref, got)
		}
		// the registry's log: containerd resolved the name and fetched the config and every layer
		path := "/v2/" + strings.TrimPrefix(repo, strings.SplitN(reg, "/", 2)[0]+"/")
		if !fetched[registryRequest{"HEAD", path + "/manifests/" + tag, "200"}] && !fetched[registryRequest{"GET", path + "/manifests/" + tag, "200"}] {
			t.Errorf("%s: the registry's log has no request of containerd's for %s/manifests/%s", image, path, tag)
		}
		var manifest struct {
			Config struct{ Digest string }   `json:"config"`
			Layers []struct{ Digest string } `json:"layers"`
		}
		if err := json.Unmarshal([]byte(output(t, crane, "manifest", p.ref)), &manifest); err != nil {
			t.Fatal(err)
		}
		blobs := []string{manifest.Config.Digest}
		for _, l := range manifest.Layers {
			blobs = append(blobs, l.Digest)
		}
		n := 0
		for _, b := range blobs {
			if fetched[registryRequest{"GET", path + "/blobs/" + b, "200"}] {
				n++
			} else {
				t.Errorf("%s: containerd never fetched blob %s from the registry (its log: %s)", image, b, env["E2E_REGISTRY_LOG"])
			}
		}
		t.Logf("%s: containerd fetched %d of the %d blobs of %s from the registry", image, n, len(blobs), p.ref)
	}
}
