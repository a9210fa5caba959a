package main

import (
	"regexp"
	"strings"
)

// link is one link target written in a Markdown file, with the line it is on.
type link struct {
	line   int
	target string
}

// document is what the checker needs of a Markdown file: the anchors its headings (and explicit HTML
// ids) make, and the links it holds outside code.
type document struct {
	anchors map[string]bool
	links   []link
}

var (
	fence         = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})")
	atxHeading    = regexp.MustCompile(`^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	listItem      = regexp.MustCompile(`^ {0,3}([-*+]|\d{1,9}[.)])([ \t]|$)`)
	htmlID        = regexp.MustCompile(`<[a-zA-Z][^>]*\s(?:id|name)\s*=\s*["']([^"']+)["']`)
	referenceDef  = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:[ \t]*(<[^>]*>|\S+)`)
	codeSpan      = regexp.MustCompile("(`+)[^`].*?(`+)")
	linkOpen      = regexp.MustCompile(`\]\(`)
	leadingSpaces = regexp.MustCompile(`^( *)`)
)

// parse reads a Markdown file as GitHub renders it, as far as links and anchors go: fenced and indented
// code blocks and code spans hold no links; ATX headings make anchors (GitHub's slugs, numbered when they
// repeat); inline links, images and reference definitions are links.
func parse(text string) document {
	doc := document{anchors: map[string]bool{}}
	var headings slugs
	var fenceMark string // the open fence ("```" or "~~~~"), empty outside a fenced block
	inList, prevBlank, inIndentedCode := false, true, false
	for i, line := range strings.Split(text, "\n") {
		n := i + 1
		line = strings.TrimRight(line, "\r")
		if fenceMark != "" {
			if m := fence.FindStringSubmatch(line); m != nil && m[1][0] == fenceMark[0] && len(m[1]) >= len(fenceMark) &&
				strings.TrimSpace(line[strings.Index(line, m[1])+len(m[1]):]) == "" {
				fenceMark = ""
			}
			continue
		}
		if m := fence.FindStringSubmatch(line); m != nil {
			fenceMark = m[1]
			continue
		}
		blank := strings.TrimSpace(line) == ""
		indent := len(leadingSpaces.FindString(strings.ReplaceAll(line, "\t", "    ")))
		switch {
		case blank:
		case listItem.MatchString(line):
			inList = true
		case indent == 0:
			inList = false
		}
		// An indented code block starts after a blank line outside a list and goes on while lines stay
		// indented (or blank).
		inIndentedCode = !blank && indent >= 4 && !inList && (prevBlank || inIndentedCode)
		prevBlank = blank
		if blank || inIndentedCode {
			continue
		}
		for _, m := range htmlID.FindAllStringSubmatch(line, -1) {
			doc.anchors[m[1]] = true
		}
		if m := atxHeading.FindStringSubmatch(line); m != nil {
			doc.anchors[headings.next(m[1])] = true
		}
		if m := referenceDef.FindStringSubmatch(line); m != nil {
			doc.links = append(doc.links, link{n, strings.Trim(m[1], "<>")})
			continue
		}
		for _, t := range inlineTargets(codeSpan.ReplaceAllStringFunc(line, blankOut)) {
			doc.links = append(doc.links, link{n, t})
		}
	}
	return doc
}

// blankOut replaces a code span with spaces, so that what it shows is not read as a link.
func blankOut(s string) string { return strings.Repeat(" ", len(s)) }

// inlineTargets are the destinations of the inline links and images on a line: what follows "](" up to
// the closing parenthesis (parentheses inside balanced), "<...>" destinations whole, a title dropped.
func inlineTargets(line string) []string {
	var out []string
	for _, loc := range linkOpen.FindAllStringIndex(line, -1) {
		rest := line[loc[1]:]
		if strings.HasPrefix(rest, "<") {
			if end := strings.IndexByte(rest, '>'); end > 0 {
				out = append(out, rest[1:end])
			}
			continue
		}
		depth, end := 0, -1
		for j, r := range rest {
			if r == '(' {
				depth++
			} else if r == ')' {
				if depth == 0 {
					end = j
					break
				}
				depth--
			} else if r == ' ' || r == '\t' {
				end = j // a title follows
				break
			}
		}
		if end > 0 {
			out = append(out, rest[:end])
		}
	}
	return out
}
