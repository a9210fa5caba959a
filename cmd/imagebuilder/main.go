// Command imagebuilder builds linerate's container images as tarballs without a container engine or a
// registry (go-containerregistry: layers appended to an empty image, written with tarball.WriteToFile), for
// `ctr images import`, `docker load` or `crane push`:
//
//	imagebuilder manager --manager bin/manager-static --out dist/images/manager.tar [--tag linerate.dev/manager:dev]
//	imagebuilder tester --linerate bin/linerate-static --engine dataplane/build/linerate-engine \
//	    --out dist/images/tester.tar [--packages images/tester.packages] [--tag linerate.dev/tester:dev]
//	imagebuilder pause --pause bin/pause --out dist/images/pause.tar [--tag linerate.dev/pause:v1]
//
// --arch (default amd64) is the image's architecture. The manager and pause images, one static Go binary
// each, are built for amd64 or arm64 (GOARCH=arm64 go build, then --arch arm64); the tester only for amd64:
// it carries Debian amd64's DPDK libraries and plugin paths.
//
// The tester image carries the Debian runtime packages listed in images/tester.packages (resolved with apt,
// downloaded with apt-get download into a cache, their files read with dpkg-deb), and the build fails when a
// library that the engine or a DPDK plugin needs does not resolve inside the image. What each image holds is
// in spec.go; Dockerfile and Dockerfile.tester build the same images with a container engine.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "imagebuilder:", err)
		os.Exit(1)
	}
}

func usage() string {
	var names []string
	for n := range specs {
		names = append(names, n)
	}
	sort.Strings(names)
	return "usage: imagebuilder " + strings.Join(names, "|") + " --out FILE [flags] (imagebuilder IMAGE -h for the flags)"
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("%s", usage())
	}
	spec, ok := specs[args[0]]
	if !ok {
		return fmt.Errorf("unknown image %q; %s", args[0], usage())
	}
	fs := flag.NewFlagSet(spec.Name, flag.ContinueOnError)
	out := fs.String("out", "", "the image tarball to write")
	tag := fs.String("tag", spec.DefaultTag, "the image reference recorded in the tarball")
	arch := fs.String("arch", "amd64", "the image's architecture (GOARCH of its binaries): "+strings.Join(archNames(), ", "))
	srcs := map[string]*string{}
	for _, f := range spec.Files {
		srcs[f.Flag] = fs.String(f.Flag, "", f.Help+" -> "+f.Path)
	}
	var packages, extra string
	var debCache string
	if spec.Packages != "" {
		fs.StringVar(&packages, "packages", spec.Packages, "the Debian package list whose files go into the image")
		fs.StringVar(&extra, "extra-packages", "", "a second package list, for trials (e.g. a stand-in engine's libraries)")
		def := filepath.Join(cacheDir(), "debs")
		fs.StringVar(&debCache, "deb-cache", def, "where downloaded .debs are kept")
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("%s: --out is required", spec.Name)
	}
	if err := spec.checkArch(*arch); err != nil {
		return err
	}
	files := map[string]string{}
	for _, f := range spec.Files {
		p := *srcs[f.Flag]
		if p == "" {
			return fmt.Errorf("%s image: --%s is required (%s)", spec.Name, f.Flag, f.Help)
		}
		st, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("%s image: --%s: %s is missing: build %s first", spec.Name, f.Flag, p, f.Help)
		}
		if !st.Mode().IsRegular() {
			return fmt.Errorf("%s image: --%s: %s is not a regular file", spec.Name, f.Flag, p)
		}
		files[f.Flag] = p
	}
	var lists []string
	if packages != "" {
		lists = append(lists, findUp(packages))
	}
	if extra != "" {
		lists = append(lists, extra)
	}
	return build(spec, files, lists, debCache, *tag, *arch, *out)
}

func cacheDir() string {
	if d := os.Getenv("LINERATE_CACHE"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "linerate-cache")
	}
	return filepath.Join(home, ".cache", "linerate")
}

// findUp resolves a path relative to the repository root (as the specs give them) when imagebuilder runs
// from a subdirectory: the first parent of the working directory where it exists.
func findUp(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	if _, err := os.Stat(p); err == nil {
		return p
	}
	dir, err := os.Getwd()
	if err != nil {
		return p
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
			return filepath.Join(dir, p)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return p
		}
		dir = parent
	}
}
