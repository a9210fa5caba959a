package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"log"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// epoch is the timestamp of everything we add ourselves (reproducible images); files from .debs keep theirs.
var epoch = time.Unix(0, 0)

const defaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// tree is an image layer being assembled in memory: tar headers by path (no leading slash), with the
// contents of regular files.
type tree struct {
	hdr   map[string]*tar.Header
	data  map[string][]byte
	order []string
}

func newTree() *tree { return &tree{hdr: map[string]*tar.Header{}, data: map[string][]byte{}} }

func clean(p string) string { return strings.TrimPrefix(path.Clean("/"+p), "/") }

// add puts an entry in the tree, creating missing parent directories. A path already present keeps its
// first entry (directories are shared between packages; dpkg itself would refuse two owners of a file).
func (t *tree) add(h *tar.Header, data []byte) error {
	name := clean(h.Name)
	if name == "" {
		return nil
	}
	if old, ok := t.hdr[name]; ok {
		if old.Typeflag == tar.TypeDir && h.Typeflag == tar.TypeDir {
			return nil
		}
		if old.Typeflag != h.Typeflag || old.Linkname != h.Linkname || !bytes.Equal(t.data[name], data) {
			return fmt.Errorf("%s is provided twice, differently", "/"+name)
		}
		return nil
	}
	if dir := path.Dir(name); dir != "." {
		if _, ok := t.hdr[dir]; !ok {
			if err := t.add(&tar.Header{Typeflag: tar.TypeDir, Name: dir, Mode: 0o755, ModTime: epoch}, nil); err != nil {
				return err
			}
		}
	}
	hh := *h
	hh.Name = name
	if hh.Typeflag == tar.TypeDir {
		hh.Name += "/"
	}
	if hh.Typeflag == tar.TypeLink {
		hh.Linkname = clean(hh.Linkname)
	}
	hh.Uid, hh.Gid, hh.Uname, hh.Gname = 0, 0, "root", "root"
	hh.Size = int64(len(data))
	hh.Format = tar.FormatPAX
	t.hdr[name] = &hh
	if data != nil {
		t.data[name] = data
	}
	t.order = append(t.order, name)
	return nil
}

func (t *tree) addFile(p string, data []byte, mode int64) error {
	return t.add(&tar.Header{Typeflag: tar.TypeReg, Name: p, Mode: mode, ModTime: epoch}, data)
}

// lookup resolves p inside the tree, following symbolic links (absolute ones from the image's root) in
// every component; it returns the final path or "" when it does not exist.
func (t *tree) lookup(p string) string {
	return t.lookupDepth(clean(p), 0)
}

func (t *tree) lookupDepth(p string, depth int) string {
	if depth > 40 {
		return ""
	}
	parts := strings.Split(p, "/")
	cur := ""
	for i, c := range parts {
		next := clean(cur + "/" + c)
		h, ok := t.hdr[next]
		if !ok {
			return ""
		}
		switch h.Typeflag {
		case tar.TypeSymlink:
			target := h.Linkname
			if !strings.HasPrefix(target, "/") {
				target = cur + "/" + target
			}
			rest := strings.Join(parts[i+1:], "/")
			return t.lookupDepth(clean(target+"/"+rest), depth+1)
		case tar.TypeLink:
			next = h.Linkname
		}
		cur = next
	}
	return cur
}

// tarball writes the tree as an uncompressed tar, in sorted order.
func (t *tree) tarball() ([]byte, error) {
	names := append([]string(nil), t.order...)
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		h := t.hdr[n]
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if d := t.data[n]; len(d) > 0 {
			if _, err := tw.Write(d); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func build(spec *Spec, files map[string]string, lists []string, debCache, tag, arch, out string) error {
	ref, err := name.NewTag(tag)
	if err != nil {
		return fmt.Errorf("--tag %q: %w", tag, err)
	}
	var layers []*tree
	sys := newTree()
	if len(lists) > 0 {
		pkgs, err := resolvePackages(lists)
		if err != nil {
			return err
		}
		debs, err := downloadDebs(pkgs, debCache)
		if err != nil {
			return err
		}
		for _, d := range debs {
			if err := addDeb(sys, d); err != nil {
				return err
			}
		}
		log.Printf("%s: %d Debian packages (%s)", spec.Name, len(pkgs), strings.Join(pkgs, " "))
		layers = append(layers, sys)
	}
	app := newTree()
	for _, d := range spec.Dirs {
		if err := app.add(&tar.Header{Typeflag: tar.TypeDir, Name: d.Path, Mode: d.Mode, ModTime: epoch}, nil); err != nil {
			return err
		}
	}
	for _, s := range spec.Symlinks {
		if err := app.add(&tar.Header{Typeflag: tar.TypeSymlink, Name: s.Path, Linkname: s.Target, Mode: 0o777, ModTime: epoch}, nil); err != nil {
			return err
		}
	}
	for _, f := range spec.Files {
		data, err := os.ReadFile(files[f.Flag])
		if err != nil {
			return err
		}
		if err := checkLinkage(f, files[f.Flag], data, arch); err != nil {
			return err
		}
		if err := app.addFile(f.Path, data, 0o755); err != nil {
			return err
		}
	}
	layers = append(layers, app)

	// Every library the dynamic binaries and the DPDK plugins need must resolve inside the image.
	var dyn []string
	for _, f := range spec.Files {
		if f.Dynamic {
			dyn = append(dyn, f.Path)
		}
	}
	if len(dyn) > 0 {
		merged := newTree()
		for _, l := range layers {
			for _, n := range l.order {
				if err := merged.add(l.hdr[n], l.data[n]); err != nil {
					return err
				}
			}
		}
		n, err := checkClosure(merged, dyn, TesterPMDDir)
		if err != nil {
			return err
		}
		log.Printf("%s: every DT_NEEDED of %d ELF files resolves in the image", spec.Name, n)
	}

	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	for _, l := range layers {
		data, err := l.tarball()
		if err != nil {
			return err
		}
		layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(data)), nil
		}, tarball.WithMediaType(types.OCILayer))
		if err != nil {
			return err
		}
		if img, err = mutate.AppendLayers(img, layer); err != nil {
			return err
		}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cf = cf.DeepCopy()
	cf.Architecture, cf.OS = arch, "linux"
	cf.Created = v1.Time{Time: epoch}
	cf.Config = v1.Config{
		Entrypoint: spec.Entrypoint,
		User:       spec.User,
		Env:        []string{defaultPath},
		WorkingDir: "/",
		Labels:     spec.Labels(),
	}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return err
	}
	if err := os.MkdirAll(path.Dir(out), 0o755); err != nil {
		return err
	}
	tmp := out + ".tmp"
	if err := tarball.WriteToFile(tmp, ref, img); err != nil {
		return err
	}
	if err := os.Rename(tmp, out); err != nil {
		return err
	}
	d, _ := img.Digest()
	st, _ := os.Stat(out)
	log.Printf("wrote %s: %s (%s), %.1f MiB", out, ref, d, float64(st.Size())/(1<<20))
	return nil
}
