// Command checklinks fails when a relative link or #anchor in linerate's Markdown does not resolve: the file
// or folder it names must exist in the tree, and its anchor must be a heading of that file as GitHub slugs
// it (or an explicit HTML id). Links with a scheme (https:, mailto:) are not followed: it needs no network.
// Run from the repository's root by make lint:
//
//	go run ./hack/checklinks            # the docs below
//	go run ./hack/checklinks FILE.md…   # just these
//
// Each broken link is one line, "file:line: broken link "target": why"; the exit status is 1 when there is
// any.
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
)

// docGlobs are the Markdown files a reader follows links through.
var docGlobs = []string{
	"README.md",
	"docs/*.md",
	"charts/linerate/README.md",
	"dataplane/PROTOCOL.md",
}

// docTrees are folders whose Markdown files are all checked, however deep.
var docTrees = []string{"config/samples"}

func main() {
	files := os.Args[1:]
	if len(files) == 0 {
		var err error
		if files, err = docFiles("."); err != nil {
			fmt.Fprintln(os.Stderr, "checklinks:", err)
			os.Exit(2)
		}
	}
	os.Exit(run(".", files, os.Stdout))
}

// run checks the links of files (relative to root) and reports what it found; it returns the exit status.
func run(root string, files []string, out io.Writer) int {
	c := newChecker(root)
	var broken []brokenLink
	links := 0
	for _, f := range files {
		b, n, err := c.checkFile(f)
		if err != nil {
			fmt.Fprintf(out, "checklinks: %v\n", err)
			return 2
		}
		broken = append(broken, b...)
		links += n
	}
	for _, b := range broken {
		fmt.Fprintln(out, b)
	}
	if len(broken) > 0 {
		fmt.Fprintf(out, "checklinks: %d broken of %d relative links in %d files\n", len(broken), links, len(files))
		return 1
	}
	fmt.Fprintf(out, "checklinks: %d relative links in %d files resolve\n", links, len(files))
	return 0
}

// docFiles lists the files of docGlobs and docTrees that exist under root, sorted.
func docFiles(root string) ([]string, error) {
	seen := map[string]bool{}
	for _, g := range docGlobs {
		m, err := filepath.Glob(filepath.Join(root, g))
		if err != nil {
			return nil, err
		}
		for _, f := range m {
			seen[f] = true
		}
	}
	for _, t := range docTrees {
		err := filepath.WalkDir(filepath.Join(root, t), func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && filepath.Ext(p) == ".md" {
				seen[p] = true
			}
			return nil
		})
		if err != nil && !os.IsNotExist(err) {
			return nil, err
		}
	}
	var files []string
	for f := range seen {
		rel, err := filepath.Rel(root, f)
		if err != nil {
			return nil, err
		}
		files = append(files, rel)
	}
	sort.Strings(files)
	return files, nil
}
