package main

import (
	"bufio"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// brokenLink is a link that does not resolve, where it is written and why.
type brokenLink struct {
	file   string
	line   int
	target string
	why    string
}

func (b brokenLink) String() string {
	return fmt.Sprintf("%s:%d: broken link %q: %s", b.file, b.line, b.target, b.why)
}

// checker resolves links against the tree under root, parsing each Markdown file it needs once.
type checker struct {
	root string
	docs map[string]document
}

func newChecker(root string) *checker { return &checker{root: root, docs: map[string]document{}} }

var (
	scheme     = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
	lineAnchor = regexp.MustCompile(`^L(\d+)(?:C\d+)?(?:-L(\d+)(?:C\d+)?)?$`)
)

// checkFile checks every relative link of one file (relative to root); it returns the broken ones and how
// many relative links there were.
func (c *checker) checkFile(file string) ([]brokenLink, int, error) {
	doc, err := c.doc(file)
	if err != nil {
		return nil, 0, err
	}
	var broken []brokenLink
	n := 0
	for _, l := range doc.links {
		if scheme.MatchString(l.target) || strings.HasPrefix(l.target, "//") {
			continue // another site: not followed, no network here
		}
		n++
		if why := c.resolve(file, l.target); why != "" {
			broken = append(broken, brokenLink{file, l.line, l.target, why})
		}
	}
	return broken, n, nil
}

// resolve says why target, written in file, does not resolve ("" when it does).
func (c *checker) resolve(file, target string) string {
	path, anchor, _ := strings.Cut(target, "#")
	p, err := url.PathUnescape(path)
	if err != nil {
		return "the path is not valid URL escaping: " + err.Error()
	}
	if a, err := url.PathUnescape(anchor); err == nil {
		anchor = a
	}
	dest := file
	if p != "" {
		if strings.HasPrefix(p, "/") {
			dest = filepath.Clean(strings.TrimPrefix(p, "/")) // GitHub reads a leading / as the repository's root
		} else {
			dest = filepath.Join(filepath.Dir(file), p)
		}
		if dest == ".." || strings.HasPrefix(dest, "../") {
			return "it leaves the repository"
		}
		st, err := os.Stat(filepath.Join(c.root, dest))
		if err != nil {
			return fmt.Sprintf("%s does not exist", dest)
		}
		if st.IsDir() {
			if anchor != "" {
				return fmt.Sprintf("%s is a folder: it has no #%s", dest, anchor)
			}
			return ""
		}
	}
	if anchor == "" {
		return ""
	}
	if !strings.EqualFold(filepath.Ext(dest), ".md") {
		return c.lineAnchor(dest, anchor)
	}
	doc, err := c.doc(dest)
	if err != nil {
		return err.Error()
	}
	if doc.anchors[anchor] {
		return ""
	}
	return fmt.Sprintf("%s has no heading with the anchor #%s%s", dest, anchor, closest(doc.anchors, anchor))
}

// lineAnchor checks a GitHub line anchor (#L12, #L12-L20) into a file that is not Markdown.
func (c *checker) lineAnchor(dest, anchor string) string {
	m := lineAnchor.FindStringSubmatch(anchor)
	if m == nil {
		return fmt.Sprintf("#%s: only line anchors (#L12, #L12-L20) point into %s, which is not Markdown", anchor, dest)
	}
	last, _ := strconv.Atoi(m[1])
	if m[2] != "" {
		last, _ = strconv.Atoi(m[2])
	}
	f, err := os.Open(filepath.Join(c.root, dest))
	if err != nil {
		return err.Error()
	}
	defer func() { _ = f.Close() }()
	lines := 0
	for s := bufio.NewScanner(f); s.Scan(); {
		lines++
	}
	if last > lines {
		return fmt.Sprintf("%s has %d lines, not %d", dest, lines, last)
	}
	return ""
}

// doc parses a Markdown file once.
func (c *checker) doc(file string) (document, error) {
	if d, ok := c.docs[file]; ok {
		return d, nil
	}
	b, err := os.ReadFile(filepath.Join(c.root, file))
	if err != nil {
		return document{}, err
	}
	d := parse(string(b))
	c.docs[file] = d
	return d, nil
}

// closest names the anchors most like the one asked for, to point at the heading meant.
func closest(anchors map[string]bool, want string) string {
	var near []string
	for a := range anchors {
		if strings.Contains(a, want) || strings.Contains(want, a) && len(a) > 3 || commonPrefix(a, want) >= 8 {
			near = append(near, "#"+a)
		}
	}
	if len(near) == 0 {
		return ""
	}
	sort.Strings(near)
	if len(near) > 3 {
		near = near[:3]
	}
	return " (did you mean " + strings.Join(near, ", ") + "?)"
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
