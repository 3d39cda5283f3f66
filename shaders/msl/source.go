package msl

import (
	"regexp"
	"strings"
)

// Source is one .metal file of a library.
type Source struct {
	Name string
	Text string
}

var (
	reMetalInclude = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*include[ \t]*<metal_\w+>.*$`)
	reHostName     = regexp.MustCompile(`template\s*\[\[\s*host_name\s*\(\s*"([^"]+)"\s*\)\s*\]\]([^;]*);`)
	reFuncConst    = regexp.MustCompile(`constant\s+([\w:]+)\s+(\w+)\s*\[\[\s*function_constant\s*\(\s*(\d+)\s*\)\s*\]\]\s*;`)
	reKernel       = regexp.MustCompile(`\bkernel\s+void\s+(\w+)\s*\(`)
	reAttr         = regexp.MustCompile(`\[\[\s*(\w+)\s*(?:\(\s*(\d+)\s*\))?\s*\]\]`)
	reAnyAttr      = regexp.MustCompile(`\[\[[^\[\]]*\]\]`)
	reVecCtor      = regexp.MustCompile(`\b((?:packed_)?(?:float|half|int|uint|short|ushort|char|uchar|long|ulong)[234])\s*\(`)
	reThreadgroup  = regexp.MustCompile(`\bthreadgroup\b`)
	reIdent        = regexp.MustCompile(`[A-Za-z_]\w*$`)
)

// stripComments blanks comments, keeping newlines so line numbers hold.
func stripComments(s string) string {
	b := []byte(s)
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '"' || b[i] == '\'':
			q := b[i]
			for i++; i < len(b) && b[i] != q && b[i] != '\n'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '/':
			for ; i < len(b) && b[i] != '\n'; i++ {
				b[i] = ' '
			}
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '*':
			b[i], b[i+1] = ' ', ' '
			for i += 2; i < len(b) && !(b[i] == '*' && i+1 < len(b) && b[i+1] == '/'); i++ {
				if b[i] != '\n' {
					b[i] = ' '
				}
			}
			if i+1 < len(b) {
				b[i], b[i+1] = ' ', ' '
				i++
			}
		}
	}
	return string(b)
}

// blank replaces s with spaces, keeping its newlines.
func blank(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' {
			return r
		}
		return ' '
	}, s)
}

// keepLines appends s's newlines to r so a rewrite spans as many lines.
func keepLines(r, s string) string { return r + strings.Repeat("\n", strings.Count(s, "\n")) }

// matching returns the index of the bracket closing the one at open.
func matching(s string, open int) int {
	pairs := map[byte]byte{'(': ')', '[': ']', '{': '}', '<': '>'}
	want := []byte{pairs[s[open]]}
	for i := open + 1; i < len(s); i++ {
		c := s[i]
		if c == want[len(want)-1] {
			want = want[:len(want)-1]
			if len(want) == 0 {
				return i
			}
			continue
		}
		if cl, ok := pairs[c]; ok && (c != '<' || s[open] == '<') {
			want = append(want, cl)
		}
	}
	return -1
}

// splitTop splits s at commas outside brackets.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[', '{', '<':
			depth++
		case ')', ']', '}', '>':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	if strings.TrimSpace(s[start:]) != "" {
		out = append(out, s[start:])
	}
	return out
}

// MaxConstants bounds a function constant's index.
const MaxConstants = 64

// rewriteThreadgroupDecls turns `threadgroup T name[N];` declarations into
// references to per-threadgroup storage, so all threads of a threadgroup
// share them (a plain C++ local would be per thread). A declaration of
// several arrays (`threadgroup T a[N], b[M];`) becomes one per array: it
// was left as written, so each of its arrays became per-thread storage
// (issue #34 round 8: attention_merge's first form).
func rewriteThreadgroupDecls(s string, declare func(typ, name, dims string) string) string {
	var b strings.Builder
	last := 0
	for _, loc := range reThreadgroup.FindAllStringIndex(s, -1) {
		if loc[0] < last {
			continue
		}
		i := loc[1]
		var commas []int // the declarators' separators
		stop := byte(0)
		for ; i < len(s); i++ {
			c := s[i]
			if c == '[' {
				if j := matching(s, i); j > 0 {
					i = j
					continue
				}
			}
			if c == ',' {
				commas = append(commas, i)
				continue
			}
			if strings.IndexByte(";(){}=*&", c) >= 0 {
				stop = c
				break
			}
		}
		if stop != ';' {
			continue
		}
		// the declarators: the first holds the type
		var decls []string
		from := loc[1]
		for _, c := range append(commas, i) {
			decls = append(decls, s[from:c])
			from = c + 1
		}
		var reps []string
		typ := ""
		for n, decl := range decls {
			dims := ""
			head := decl
			if k := strings.IndexByte(decl, '['); k >= 0 {
				head, dims = decl[:k], strings.TrimSpace(decl[k:])
			}
			head = strings.TrimSpace(head)
			name := reIdent.FindString(head)
			if n == 0 {
				typ = strings.TrimSpace(strings.TrimSuffix(head, name))
			} else if name != head {
				name = "" // a later declarator is a name and its dims
			}
			if name == "" || typ == "" {
				reps = nil
				break
			}
			reps = append(reps, declare(typ, name, dims))
		}
		if reps == nil {
			continue
		}
		b.WriteString(s[last:loc[0]])
		b.WriteString(keepLines(strings.Join(reps, " "), s[loc[0]:i+1]))
		last = i + 1
	}
	b.WriteString(s[last:])
	return b.String()
}
