package tokenizer

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// preTokenizer splits fragments into the words BPE runs on. first says
// whether words[0] starts the input text (Metaspace's "first" scheme).
type preTokenizer interface {
	split(words []string, first bool) []string
}

type preSequence []preTokenizer

func (q preSequence) split(words []string, first bool) []string {
	for _, p := range q {
		words = p.split(words, first)
	}
	return words
}

// splitBehavior is what Hugging Face's Split does with a match.
type splitBehavior int

const (
	splitIsolated splitBehavior = iota
	splitRemoved
	splitMergedWithPrevious
	splitMergedWithNext
	splitContiguous
)

// preSplit splits on a regex (patterns such as GPT-2's need lookahead, so
// this uses regexp2) or on a literal string.
type preSplit struct {
	re       *regexp2.Regexp
	literal  string
	behavior splitBehavior
	invert   bool
}

// matches returns the byte ranges matched in s.
func (p *preSplit) matches(s string) [][2]int {
	var out [][2]int
	if p.re == nil {
		if p.literal == "" {
			return nil
		}
		for off := 0; ; {
			i := strings.Index(s[off:], p.literal)
			if i < 0 {
				return out
			}
			out = append(out, [2]int{off + i, off + i + len(p.literal)})
			off += i + len(p.literal)
		}
	}
	return regexMatches(p.re, s)
}

// regexMatches runs re over s and converts regexp2's rune offsets to bytes.
func regexMatches(re *regexp2.Regexp, s string) [][2]int {
	runes := []rune(s)
	var byteOff []int
	var out [][2]int
	m, err := re.FindRunesMatch(runes)
	for err == nil && m != nil {
		if byteOff == nil {
			byteOff = make([]int, len(runes)+1)
			o := 0
			for i, r := range runes {
				byteOff[i] = o
				o += utf8.RuneLen(r)
			}
			byteOff[len(runes)] = o
		}
		if m.Length > 0 {
			out = append(out, [2]int{byteOff[m.Index], byteOff[m.Index+m.Length]})
		}
		m, err = re.FindNextMatch(m)
	}
	return out
}

func (p *preSplit) split(words []string, _ bool) []string {
	var out []string
	for _, w := range words {
		out = splitByMatches(out, w, p.matches(w), p.behavior, p.invert)
	}
	return out
}

// splitByMatches cuts s at the given match ranges according to behavior.
func splitByMatches(out []string, s string, ms [][2]int, behavior splitBehavior, invert bool) []string {
	type seg struct {
		s     string
		match bool
	}
	var segs []seg
	prev := 0
	for _, m := range ms {
		if m[0] > prev {
			segs = append(segs, seg{s[prev:m[0]], invert})
		}
		segs = append(segs, seg{s[m[0]:m[1]], !invert})
		prev = m[1]
	}
	if prev < len(s) {
		segs = append(segs, seg{s[prev:], invert})
	}
	switch behavior {
	case splitIsolated:
		for _, g := range segs {
			out = append(out, g.s)
		}
	case splitRemoved:
		for _, g := range segs {
			if !g.match {
				out = append(out, g.s)
			}
		}
	case splitMergedWithPrevious:
		// A match joins the segment before it, unless that was a match too.
		for i, g := range segs {
			if g.match && i > 0 && !segs[i-1].match {
				out[len(out)-1] += g.s
			} else {
				out = append(out, g.s)
			}
		}
	case splitMergedWithNext:
		// A match joins the segment after it, unless that is a match too.
		for i := 0; i < len(segs); i++ {
			g := segs[i]
			if g.match && i+1 < len(segs) && !segs[i+1].match {
				out = append(out, g.s+segs[i+1].s)
				i++
				continue
			}
			out = append(out, g.s)
		}
	case splitContiguous:
		for i, g := range segs {
			if g.match && i > 0 && segs[i-1].match {
				out[len(out)-1] += g.s
			} else {
				out = append(out, g.s)
			}
		}
	}
	return out
}

// preDigits isolates numeric characters: each one alone, or runs of them.
// Like Hugging Face (Rust char::is_numeric), every Unicode N* character
// counts, not only ASCII digits (so "½" is split off).
type preDigits struct{ individual bool }

func (p preDigits) split(words []string, _ bool) []string {
	var out []string
	for _, w := range words {
		start := 0
		inDigits := false
		for i, r := range w {
			d := unicode.IsNumber(r)
			if d && p.individual {
				if i > start {
					out = append(out, w[start:i])
				}
				n := utf8.RuneLen(r)
				out = append(out, w[i:i+n])
				start = i + n
				inDigits = false
				continue
			}
			if i > start && d != inDigits {
				out = append(out, w[start:i])
				start = i
			}
			inDigits = d
		}
		if start < len(w) {
			out = append(out, w[start:])
		}
	}
	return out
}

// preByteLevel is GPT-2's pre-tokenizer: optionally a leading space, the
// GPT-2 split regex, then every byte mapped to its printable rune.
type preByteLevel struct {
	addPrefixSpace bool
	re             *regexp2.Regexp // nil when use_regex is false
}

func (p preByteLevel) split(words []string, _ bool) []string {
	var out []string
	for _, w := range words {
		if p.addPrefixSpace && !strings.HasPrefix(w, " ") {
			w = " " + w
		}
		if p.re == nil {
			out = append(out, w)
			continue
		}
		out = splitByMatches(out, w, regexMatches(p.re, w), splitIsolated, false)
	}
	for i, w := range out {
		out[i] = byteLevelEncode(w)
	}
	return out
}

// preMetaspace replaces spaces by "▁", prepends one to the start (always,
// or only at the start of the input: Llama's non-legacy behaviour) and
// optionally splits before each "▁".
type preMetaspace struct {
	replacement string
	prepend     string // "always", "first" or "never"
	splitWords  bool
}

func (p preMetaspace) split(words []string, first bool) []string {
	var out []string
	for i, w := range words {
		w = strings.ReplaceAll(w, " ", p.replacement)
		if w != "" && !strings.HasPrefix(w, p.replacement) &&
			(p.prepend == "always" || (p.prepend == "first" && first && i == 0)) {
			w = p.replacement + w
		}
		if !p.splitWords {
			out = append(out, w)
			continue
		}
		var ms [][2]int
		for off := 0; ; {
			j := strings.Index(w[off:], p.replacement)
			if j < 0 {
				break
			}
			ms = append(ms, [2]int{off + j, off + j + len(p.replacement)})
			off += j + len(p.replacement)
		}
		out = splitByMatches(out, w, ms, splitMergedWithNext, false)
	}
	return out
}

// preWhitespaceSplit splits on whitespace, dropping it.
type preWhitespaceSplit struct{}

func (preWhitespaceSplit) split(words []string, _ bool) []string {
	var out []string
	for _, w := range words {
		out = append(out, strings.FieldsFunc(w, unicode.IsSpace)...)
	}
	return out
}
