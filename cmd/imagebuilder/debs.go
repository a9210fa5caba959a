package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// readPackageList reads a package list: one or more names per line, '#' starts a comment.
func readPackageList(file string) ([]string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var pkgs []string
	valid := regexp.MustCompile(`^[a-z0-9][a-z0-9.+-]+$`)
	for i, line := range strings.Split(string(data), "\n") {
		line, _, _ = strings.Cut(line, "#")
		for _, p := range strings.Fields(line) {
			if !valid.MatchString(p) {
				return nil, fmt.Errorf("%s:%d: %q is not a Debian package name", file, i+1, p)
			}
			pkgs = append(pkgs, p)
		}
	}
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("%s lists no package", file)
	}
	return pkgs, nil
}

// debPackage is one resolved package: name, version and architecture as apt chose them.
type debPackage struct{ Name, Version, Arch string }

func (p debPackage) file() string {
	return fmt.Sprintf("%s_%s_%s.deb", p.Name, strings.ReplaceAll(p.Version, ":", "%3a"), p.Arch)
}

// resolvePackages asks apt what installing the lists on an empty system would install: the packages and
// their dependencies (pre-depends included, recommends not), exactly as `apt-get install
// --no-install-recommends` in Dockerfile.tester resolves them, minus what its base image already has.
func resolvePackages(lists []string) ([]string, error) {
	var want []string
	for _, l := range lists {
		p, err := readPackageList(l)
		if err != nil {
			return nil, err
		}
		want = append(want, p...)
	}
	pkgs, err := aptSimulate(want)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range pkgs {
		out = append(out, p.Name+"="+p.Version+"="+p.Arch)
	}
	return out, nil
}

func aptSimulate(want []string) ([]debPackage, error) {
	status, err := os.CreateTemp("", "imagebuilder-dpkg-status")
	if err != nil {
		return nil, err
	}
	if err := status.Close(); err != nil {
		return nil, err
	}
	defer func() { _ = os.Remove(status.Name()) }()
	args := append([]string{"-s", "-q", "-o", "Dir::State::status=" + status.Name(), "-o", "APT::Install-Recommends=false",
		"-o", "Debug::NoLocking=1", "install"}, want...)
	cmd := exec.Command("apt-get", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("apt-get %s: %v: %s(run `apt-get update` once if apt knows no package)", strings.Join(args, " "), err, stderr.String())
	}
	// Inst zlib1g (1:1.2.13.dfsg-1 Debian:12.12/stable [amd64])
	inst := regexp.MustCompile(`^Inst (\S+) \((\S+) .*\[(\S+)\]\)`)
	var pkgs []debPackage
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if m := inst.FindStringSubmatch(sc.Text()); m != nil {
			pkgs = append(pkgs, debPackage{Name: m[1], Version: m[2], Arch: m[3]})
		}
	}
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("apt-get -s install %s installs nothing:\n%s", strings.Join(want, " "), out)
	}
	return pkgs, nil
}

// downloadDebs fetches the resolved packages into the cache (apt-get download, only those not there yet) and
// returns their paths.
func downloadDebs(resolved []string, cache string) ([]string, error) {
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return nil, err
	}
	var paths, missing []string
	for _, r := range resolved {
		f := strings.SplitN(r, "=", 3)
		p := debPackage{Name: f[0], Version: f[1], Arch: f[2]}
		path := filepath.Join(cache, p.file())
		paths = append(paths, path)
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			missing = append(missing, p.Name+"="+p.Version)
		}
	}
	if len(missing) > 0 {
		cmd := exec.Command("apt-get", append([]string{"download", "-q", "-o", "APT::Sandbox::User=root"}, missing...)...)
		cmd.Dir = cache
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("apt-get download %s: %v\n%s", strings.Join(missing, " "), err, out)
		}
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("apt-get download did not leave %s", p)
		}
	}
	return paths, nil
}

// Documentation is left out of the image, except each package's copyright file.
var skipPrefixes = []string{"usr/share/doc/", "usr/share/man/", "usr/share/info/", "usr/share/lintian/", "usr/share/locale/", "usr/share/bug/"}

func skipped(name string) bool {
	for _, p := range skipPrefixes {
		if strings.HasPrefix(name, p) {
			return p != "usr/share/doc/" || !strings.HasSuffix(name, "/copyright")
		}
	}
	return false
}

// addDeb adds a .deb's files (dpkg-deb --fsys-tarfile) to the tree.
func addDeb(t *tree, deb string) error {
	cmd := exec.Command("dpkg-deb", "--fsys-tarfile", deb)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	tr := tar.NewReader(out)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			_ = cmd.Wait()
			return fmt.Errorf("%s: %v %s", deb, err, stderr.String())
		}
		name := clean(h.Name)
		if name == "" || skipped(name) || (h.Typeflag == tar.TypeDir && skipped(name+"/")) {
			continue
		}
		var data []byte
		if h.Typeflag == tar.TypeReg {
			if data, err = io.ReadAll(tr); err != nil {
				return err
			}
		}
		if err := t.add(h, data); err != nil {
			return fmt.Errorf("%s: %w", filepath.Base(deb), err)
		}
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("dpkg-deb --fsys-tarfile %s: %v %s", deb, err, stderr.String())
	}
	return nil
}
