package main

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// slugs hands out the anchors GitHub gives a file's headings, in order: the first "Usage" is #usage, the
// second #usage-1 (github-slugger, which GitHub's renderer uses).
type slugs struct{ seen map[string]int }

func (s *slugs) next(heading string) string {
	if s.seen == nil {
		s.seen = map[string]int{}
	}
	base := slug(headingText(heading))
	n := s.seen[base]
	s.seen[base] = n + 1
	if n == 0 {
		return base
	}
	return base + "-" + strconv.Itoa(n)
}

// slug is github-slugger's: lower case, every character but letters, marks, numbers, connector
// punctuation (the underscore) and the hyphen dropped, each space a hyphen. So "Layout — where" is
// "layout--where": the dash goes, both spaces stay.
func slug(text string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-', unicode.IsLetter(r), unicode.IsMark(r), unicode.IsNumber(r), unicode.Is(unicode.Pc, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

var (
	inlineLink    = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	referenceLink = regexp.MustCompile(`!?\[([^\]]*)\]\[[^\]]*\]`)
	htmlTag       = regexp.MustCompile(`<[^>]+>`)
	// an underscore that opens or closes emphasis: at a word's edge, not inside snake_case
	underscoreEmphasis = regexp.MustCompile(`(^|[\s(])_+|_+($|[\s).,:;!?])`)
)

// headingText is the text a heading renders to, which GitHub slugs: code spans keep their content, links
// their text, HTML tags and emphasis markers go.
func headingText(md string) string {
	md = inlineLink.ReplaceAllString(md, "$1")
	md = referenceLink.ReplaceAllString(md, "$1")
	md = htmlTag.ReplaceAllString(md, "")
	md = strings.ReplaceAll(md, "`", "")
	md = underscoreEmphasis.ReplaceAllString(md, "$1$2")
	for _, e := range [][2]string{{"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", `"`}, {"&nbsp;", " "}} {
		md = strings.ReplaceAll(md, e[0], e[1])
	}
	return strings.TrimSpace(md)
}
