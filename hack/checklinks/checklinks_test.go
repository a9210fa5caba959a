package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// GitHub's anchors for headings of this repository's documents, read off github.com.
func TestSlugIsGitHubs(t *testing.T) {
	for _, c := range []struct{ heading, want string }{
		{"Layout — where a frame size travels from the CR to the wire", "layout--where-a-frame-size-travels-from-the-cr-to-the-wire"},
		{"Without Kubernetes: `linerate run`", "without-kubernetes-linerate-run"},
		{"GitOps: kubectl wait, Flux, Argo CD", "gitops-kubectl-wait-flux-argo-cd"},
		{"The engine's control protocol (version 7)", "the-engines-control-protocol-version-7"},
		{"Latency per RFC 8219 §7.2", "latency-per-rfc-8219-72"},
		{"2 × 10 GbE", "2--10-gbe"},
		{"`spec.tester.calibration` and rx_kernel_drops", "spectestercalibration-and-rx_kernel_drops"},
		{"_Emphasised_ words and **bold** ones", "emphasised-words-and-bold-ones"},
		{"[A link](other.md#x) in a heading", "a-link-in-a-heading"},
		{"Q&amp;A", "qa"},
		{"Überblick: Größe", "überblick-größe"},
	} {
		if got := slug(headingText(c.heading)); got != c.want {
			t.Errorf("slug(%q) = %q, want %q", c.heading, got, c.want)
		}
	}
}

func TestRepeatedHeadingsAreNumbered(t *testing.T) {
	var s slugs
	var got []string
	for _, h := range []string{"Usage", "Usage", "Other", "Usage"} {
		got = append(got, s.next(h))
	}
	if want := []string{"usage", "usage-1", "other", "usage-2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("anchors %v, want %v", got, want)
	}
}

func TestParseFindsLinksOutsideCodeOnly(t *testing.T) {
	text := strings.Join([]string{
		"# Title", // 1
		"See [a](a.md) and ![img](i.png \"title\").", // 2
		"`[not](code.md)` but [yes](b.md#x-y).",      // 3
		"```sh",                                      // 4
		"[not](fenced.md)",                           // 5
		"```",                                        // 6
		"",                                           // 7
		"    [not](indented-code.md)",                // 8
		"",                                           // 9
		"- a list item",                              // 10
		"",                                           // 11
		"    [yes](in-list.md) (a list's second block)", // 12
		"[ref]: <refs/ref.md>",                          // 13
		"[parens](f(1).md) <a id=\"custom\"></a>",       // 14
		"## Title", // 15
	}, "\n")
	doc := parse(text)
	want := []link{{2, "a.md"}, {2, "i.png"}, {3, "b.md#x-y"}, {12, "in-list.md"}, {13, "refs/ref.md"}, {14, "f(1).md"}}
	if !reflect.DeepEqual(doc.links, want) {
		t.Errorf("links\n got %v\nwant %v", doc.links, want)
	}
	for _, a := range []string{"title", "title-1", "custom"} {
		if !doc.anchors[a] {
			t.Errorf("no anchor #%s in %v", a, doc.anchors)
		}
	}
}

// The checker fails on each kind of broken link, naming file, line and target, and passes the good ones.
func TestBrokenLinksAreNamed(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("docs/guide.md", "# Guide\n\n## Reading the result\n\ntext\n")
	write("hack/tool.sh", "one\ntwo\nthree\n")
	write("README.md", strings.Join([]string{
		"# linerate",
		"[ok](docs/guide.md#reading-the-result) [ok](docs/) [ok](#linerate) [ok](https://example.com/x#y)",
		"[ok](hack/tool.sh#L2-L3) [ok](/docs/guide.md)",
		"[gone](docs/missing.md)",
		"[bad anchor](docs/guide.md#reading-results)",
		"[here](#nowhere)",
		"[folder](docs/#guide)",
		"[line](hack/tool.sh#L9)",
		"[out](../elsewhere.md)",
	}, "\n"))
	var out bytes.Buffer
	if status := run(root, []string{"README.md"}, &out); status != 1 {
		t.Errorf("exit status %d, want 1; output:\n%s", status, out.String())
	}
	for _, want := range []string{
		`README.md:4: broken link "docs/missing.md": docs/missing.md does not exist`,
		`README.md:5: broken link "docs/guide.md#reading-results": docs/guide.md has no heading with the anchor #reading-results (did you mean #reading-the-result?)`,
		`README.md:6: broken link "#nowhere": README.md has no heading with the anchor #nowhere`,
		`README.md:7: broken link "docs/#guide": docs is a folder: it has no #guide`,
		`README.md:8: broken link "hack/tool.sh#L9": hack/tool.sh has 3 lines, not 9`,
		`README.md:9: broken link "../elsewhere.md": it leaves the repository`,
		"checklinks: 6 broken of 11 relative links in 1 files",
	} {
		if !strings.Contains(out.String(), want+"\n") {
			t.Errorf("output lacks %q; it is:\n%s", want, out.String())
		}
	}
	out.Reset()
	if status := run(root, []string{"docs/guide.md"}, &out); status != 0 {
		t.Errorf("a file without broken links: status %d, output %s", status, out.String())
	}
}

func TestDocFilesAreTheReadersOnes(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"README.md", "docs/a.md", "docs/img.png", "config/samples/sriov/README.md",
		"config/samples/x/y/deep.md", "dataplane/PROTOCOL.md", "internal/notes.md"} {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := docFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"README.md", "config/samples/sriov/README.md", "config/samples/x/y/deep.md", "dataplane/PROTOCOL.md", "docs/a.md"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("files %v, want %v", got, want)
	}
}
