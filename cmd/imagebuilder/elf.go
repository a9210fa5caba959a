package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"fmt"
	"os/exec"
	"path"
	"regexp"
	"sort"
	"strings"
)

// The dynamic loader's directories on Debian amd64 (its built-in multiarch paths; the image has no
// ld.so.cache).
var libDirs = []string{"lib/x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu", "lib", "usr/lib", "lib64", "usr/lib64"}

// elfMachines are the architectures (GOARCH names, as an image's config spells them) images are built for,
// with the ELF machine of their binaries.
var elfMachines = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}

func archNames() []string {
	var names []string
	for a := range elfMachines {
		names = append(names, a)
	}
	sort.Strings(names)
	return names
}

// checkArch refuses an architecture the image cannot be built for: one no ELF machine is known for, and, for
// an image with Debian packages or dynamically linked files, any but amd64 (the packages are resolved
// and their multiarch paths written for the build machine, Debian amd64).
func (s *Spec) checkArch(arch string) error {
	if _, ok := elfMachines[arch]; !ok {
		return fmt.Errorf("%s image: --arch %q: one of %s", s.Name, arch, strings.Join(archNames(), ", "))
	}
	dynamic := s.Packages != ""
	for _, f := range s.Files {
		dynamic = dynamic || f.Dynamic
	}
	if dynamic && arch != "amd64" {
		return fmt.Errorf("%s image: --arch %s: only amd64: it carries Debian amd64's packages and libraries (%s, %s)", s.Name, arch, s.Packages, TesterPMDDir)
	}
	return nil
}

// checkLinkage verifies that a binary from the build machine is the kind of ELF the image expects, for the
// image's architecture.
func checkLinkage(f File, src string, data []byte, arch string) error {
	if !f.Static && !f.Dynamic {
		return nil
	}
	e, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("--%s %s is not an ELF binary: %v", f.Flag, src, err)
	}
	defer func() { _ = e.Close() }() // an in-memory reader: nothing to release that can fail
	if e.Machine != elfMachines[arch] {
		return fmt.Errorf("--%s %s is built for %s, not %s", f.Flag, src, e.Machine, arch)
	}
	interp := interpreter(e)
	needed, _ := e.ImportedLibraries()
	if f.Static && (interp != "" || len(needed) > 0) {
		return fmt.Errorf("--%s %s is dynamically linked (%s %v): build it static (CGO_ENABLED=0)", f.Flag, src, interp, needed)
	}
	if f.Dynamic && interp == "" {
		return fmt.Errorf("--%s %s has no ELF interpreter: expected a dynamically linked binary", f.Flag, src)
	}
	return nil
}

func interpreter(e *elf.File) string {
	for _, p := range e.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err == nil {
				return strings.TrimRight(string(b), "\x00")
			}
		}
	}
	return ""
}

// checkClosure follows DT_NEEDED from the roots and from every plugin in pluginDir, inside the tree, and
// fails naming each library that does not resolve (with the Debian package that has it on this machine,
// when dpkg knows). It returns how many ELF files it checked.
func checkClosure(t *tree, roots []string, pluginDir string) (int, error) {
	queue := append([]string(nil), roots...)
	prefix := clean(pluginDir) + "/"
	for _, n := range t.order {
		if strings.HasPrefix(n, prefix) && t.hdr[n].Typeflag != tar.TypeDir {
			queue = append(queue, n)
		}
	}
	seen := map[string]bool{}
	missing := map[string][]string{}
	checked := 0
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		resolved := t.lookup(p)
		if resolved == "" {
			missing[path.Base(p)] = append(missing[path.Base(p)], "(listed) "+p)
			continue
		}
		if seen[resolved] {
			continue
		}
		seen[resolved] = true
		e, err := elf.NewFile(bytes.NewReader(t.data[resolved]))
		if err != nil {
			return checked, fmt.Errorf("/%s (from %s) is not an ELF file: %v", resolved, p, err)
		}
		checked++
		if interp := interpreter(e); interp != "" {
			if t.lookup(interp) == "" {
				missing[interp] = append(missing[interp], "/"+resolved)
			}
		}
		needed, _ := e.ImportedLibraries()
		runpath, _ := e.DynString(elf.DT_RUNPATH)
		rpath, _ := e.DynString(elf.DT_RPATH)
		_ = e.Close()
		var dirs []string
		for _, rp := range append(rpath, runpath...) {
			for _, d := range strings.Split(rp, ":") {
				dirs = append(dirs, clean(strings.ReplaceAll(d, "$ORIGIN", "/"+path.Dir(resolved))))
			}
		}
		dirs = append(dirs, libDirs...)
		for _, lib := range needed {
			found := ""
			for _, d := range dirs {
				if r := t.lookup(d + "/" + lib); r != "" {
					found = d + "/" + lib
					break
				}
			}
			if found == "" {
				missing[lib] = append(missing[lib], "/"+resolved)
				continue
			}
			queue = append(queue, found)
		}
	}
	if len(missing) == 0 {
		return checked, nil
	}
	var libs []string
	for l := range missing {
		libs = append(libs, l)
	}
	sort.Strings(libs)
	var candidates []string
	for _, l := range libs {
		candidates = append(candidates, dpdkCandidates(path.Base(l))...)
	}
	known := aptKnows(candidates)
	var b strings.Builder
	b.WriteString("libraries missing from the image (add their packages to the package list):\n")
	for _, l := range libs {
		fmt.Fprintf(&b, "  %s, needed by %s%s\n", l, strings.Join(missing[l], ", "), packageHint(l, known))
	}
	return checked, fmt.Errorf("%s", b.String())
}

// packageHint names the Debian package that ships a library: the build machine's dpkg when the package is
// installed, else, for DPDK's libraries, the package that Debian's naming rule gives (librte_net_mlx5.so.23
// is in librte-net-mlx5-23) if apt knows it.
func packageHint(lib string, known map[string]bool) string {
	out, err := exec.Command("dpkg", "-S", "*/"+path.Base(lib)).Output()
	if err != nil {
		for _, p := range dpdkCandidates(path.Base(lib)) {
			if known[p] {
				return " (package " + p + ")"
			}
		}
		return ""
	}
	var pkgs []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if p, _, ok := strings.Cut(line, ": "); ok {
			pkgs = append(pkgs, strings.TrimSuffix(p, ":amd64"))
		}
	}
	if len(pkgs) == 0 {
		return ""
	}
	return " (on this machine: " + strings.Join(pkgs, ", ") + ")"
}

var dpdkLib = regexp.MustCompile(`^librte_([a-z0-9_]+)\.so\.([0-9]+)$`)

// dpdkCandidates maps a DPDK library's soname to the names Debian's policy allows for its package (the
// soname's version appended, after a dash when the name ends in a digit).
func dpdkCandidates(soname string) []string {
	m := dpdkLib.FindStringSubmatch(soname)
	if m == nil {
		return nil
	}
	base := "librte-" + strings.ReplaceAll(m[1], "_", "-")
	return []string{base + m[2], base + "-" + m[2]}
}

// aptKnows returns which of the names apt has a candidate version for, in one apt-cache call.
func aptKnows(names []string) map[string]bool {
	known := map[string]bool{}
	if len(names) == 0 {
		return known
	}
	out, _ := exec.Command("apt-cache", append([]string{"policy"}, names...)...).Output()
	cur := ""
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasSuffix(line, ":") && !strings.HasPrefix(line, " ") {
			cur = strings.TrimSuffix(line, ":")
		} else if c, ok := strings.CutPrefix(strings.TrimSpace(line), "Candidate: "); ok && cur != "" && c != "(none)" {
			known[cur] = true
		}
	}
	return known
}
