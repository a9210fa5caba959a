package main

import (
	"archive/tar"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Builds the manager image from a real static binary (images/pause stands in for the manager: same kind of
// file, faster to build) and reads the tarball back the way `ctr images import` / `docker load` would.
func TestBuildManagerImage(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "manager")
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "linerate.dev/linerate/images/pause")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out := filepath.Join(dir, "manager.tar")
	if err := run([]string{"manager", "--manager", bin, "--out", out, "--tag", "example.test/manager:t1"}); err != nil {
		t.Fatal(err)
	}
	tag, _ := name.NewTag("example.test/manager:t1")
	img, err := tarball.ImageFromPath(out, &tag)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	spec := specs["manager"]
	if !reflect.DeepEqual(cf.Config.Entrypoint, spec.Entrypoint) || cf.Config.User != spec.User || cf.OS != "linux" || cf.Architecture != "amd64" {
		t.Errorf("config: entrypoint %q user %q %s/%s", cf.Config.Entrypoint, cf.Config.User, cf.OS, cf.Architecture)
	}
	if !reflect.DeepEqual(cf.Config.Labels, spec.Labels()) {
		t.Errorf("labels %v", cf.Config.Labels)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("want 1 layer, got %d (%v)", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	want, _ := os.ReadFile(bin)
	tr := tar.NewReader(rc)
	found := false
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Name == "manager" {
			got, _ := io.ReadAll(tr)
			found = string(got) == string(want) && h.Mode&0o111 != 0 && h.Uid == 0
		}
	}
	if !found {
		t.Error("/manager is missing from the layer, differs from the binary, or is not executable")
	}

	// Reproducible: the same binary gives the same image digest.
	out2 := filepath.Join(dir, "again.tar")
	if err := run([]string{"manager", "--manager", bin, "--out", out2, "--tag", "example.test/manager:t1"}); err != nil {
		t.Fatal(err)
	}
	img2, err := tarball.ImageFromPath(out2, &tag)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := img.Digest()
	d2, _ := img2.Digest()
	if d1 != d2 {
		t.Errorf("two builds of the same binary differ: %s vs %s", d1, d2)
	}
}

func TestRefusesWrongLinkage(t *testing.T) {
	// A dynamically linked binary of the build machine where a static one is required.
	ls, err := exec.LookPath("ls")
	if err != nil {
		t.Skip("no ls")
	}
	err = run([]string{"manager", "--manager", ls, "--out", filepath.Join(t.TempDir(), "x.tar")})
	if err == nil || !strings.Contains(err.Error(), "dynamically linked") {
		t.Fatalf("want a 'dynamically linked' refusal, got %v", err)
	}
	err = run([]string{"manager", "--manager", "/nonexistent/manager", "--out", filepath.Join(t.TempDir(), "x.tar")})
	if err == nil || !strings.Contains(err.Error(), "build the manager binary") {
		t.Fatalf("want a 'missing: build ... first' error, got %v", err)
	}
}

// The closure check follows DT_NEEDED inside the image and names what is missing.
func TestClosureNamesMissingLibraries(t *testing.T) {
	ls, err := exec.LookPath("ls")
	if err != nil {
		t.Skip("no ls")
	}
	data, err := os.ReadFile(ls)
	if err != nil {
		t.Fatal(err)
	}
	tr := newTree()
	if err := tr.addFile("/usr/local/bin/engine", data, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = checkClosure(tr, []string{"/usr/local/bin/engine"}, TesterPMDDir)
	if err == nil || !strings.Contains(err.Error(), "libc.so.6") || !strings.Contains(err.Error(), "ld-linux-x86-64.so.2") {
		t.Fatalf("want libc.so.6 and the loader reported missing, got %v", err)
	}

	// With the machine's own libraries copied in (through a symlinked directory, as Debian's multiarch
	// paths are), everything resolves.
	out, err := exec.Command("ldd", ls).Output()
	if err != nil {
		t.Skipf("ldd: %v", err)
	}
	if err := tr.add(&tar.Header{Typeflag: tar.TypeSymlink, Name: "lib64", Linkname: "usr/lib64", ModTime: epoch}, nil); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		var p string
		switch {
		case len(f) >= 3 && f[1] == "=>":
			p = f[2]
		case len(f) >= 1 && strings.HasPrefix(f[0], "/"):
			p = f[0]
		default:
			continue
		}
		resolved, err := filepath.EvalSymlinks(p)
		if err != nil {
			t.Fatal(err)
		}
		lib, err := os.ReadFile(resolved)
		if err != nil {
			t.Fatal(err)
		}
		dst := p
		if strings.HasPrefix(dst, "/lib64/") {
			dst = "/usr" + dst
		}
		if err := tr.addFile(dst, lib, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	n, err := checkClosure(tr, []string{"/usr/local/bin/engine"}, TesterPMDDir)
	if err != nil {
		t.Fatal(err)
	}
	if n < 2 {
		t.Errorf("checked %d ELF files, want the binary and its libraries", n)
	}
}

// --arch: the manager (one static Go binary) is built for each GOARCH a release publishes; the image's
// config says which, and a binary of another machine is refused. The tester links Debian amd64's DPDK and
// is refused for any other architecture, naming why.
func TestArchitectures(t *testing.T) {
	dir := t.TempDir()
	staticPause := func(goarch string) string {
		bin := filepath.Join(dir, "pause-"+goarch)
		build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "linerate.dev/linerate/images/pause")
		build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOARCH="+goarch)
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("GOARCH=%s go build: %v\n%s", goarch, err, out)
		}
		return bin
	}
	arm64, amd64 := staticPause("arm64"), staticPause("amd64")
	cases := []struct {
		name, image, fileFlag, bin, arch string
		wantArch, wantErr                string
	}{
		{name: "arm64 manager", image: "manager", fileFlag: "--manager", bin: arm64, arch: "arm64", wantArch: "arm64"},
		{name: "amd64 by default", image: "manager", fileFlag: "--manager", bin: amd64, wantArch: "amd64"},
		{name: "amd64 binary, arm64 image", image: "manager", fileFlag: "--manager", bin: amd64, arch: "arm64", wantErr: "built for EM_X86_64, not arm64"},
		{name: "arm64 binary, amd64 image", image: "manager", fileFlag: "--manager", bin: arm64, arch: "amd64", wantErr: "built for EM_AARCH64, not amd64"},
		{name: "unknown architecture", image: "manager", fileFlag: "--manager", bin: amd64, arch: "s390x", wantErr: `--arch "s390x": one of amd64, arm64`},
		{name: "arm64 tester", image: "tester", fileFlag: "--linerate", bin: arm64, arch: "arm64", wantErr: "tester image: --arch arm64: only amd64"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "image.tar")
			args := []string{c.image, c.fileFlag, c.bin, "--out", out, "--tag", "example.test/" + c.image + ":t1"}
			if c.image == "tester" {
				args = append(args, "--engine", c.bin)
			}
			if c.arch != "" {
				args = append(args, "--arch", c.arch)
			}
			err := run(args)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("want an error containing %q, got %v", c.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			img, err := tarball.ImageFromPath(out, nil)
			if err != nil {
				t.Fatal(err)
			}
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			if cf.OS != "linux" || cf.Architecture != c.wantArch {
				t.Errorf("config says %s/%s, want linux/%s", cf.OS, cf.Architecture, c.wantArch)
			}
		})
	}
}
