// Package vocab is the user's vocabulary: the names and jargon that
// dictation and transcription should spell right. A list is plain text,
// one term a line, optionally followed by "=" and the spellings Whisper
// tends to produce instead ("sounds like"), comma-separated:
//
//	Kubernetes = cooper netties, cube ernetes
//	PyTorch
//	# a comment
//
// Terms steer Whisper through its prompt (Prompt) and optionally a logit
// bias on their first tokens (Bias); "sounds like" spellings become
// replacement rules applied to the text afterwards (app/rewrite).
package vocab

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Bounds on a list: it comes from the UI, files and HTTP forms.
const (
	MaxTerms   = 1000
	MaxTermLen = 100 // bytes, per term or "sounds like" spelling
	MaxText    = 64 << 10
)

// Term is one vocabulary entry.
type Term struct {
	Text       string   `json:"text"`
	SoundsLike []string `json:"soundsLike,omitempty"`
}

// Parse reads a list. Blank lines and lines starting with "#" are
// skipped; a duplicate term (case-insensitive) is merged into the first.
func Parse(text string) ([]Term, error) {
	if len(text) > MaxText {
		return nil, fmt.Errorf("vocabulary: %d bytes, at most %d", len(text), MaxText)
	}
	if !utf8.ValidString(text) {
		return nil, fmt.Errorf("vocabulary: not UTF-8 text")
	}
	var terms []Term
	seen := map[string]int{}
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		head, alts, _ := strings.Cut(line, "=")
		t := Term{Text: clean(head)}
		if t.Text == "" {
			return nil, fmt.Errorf("vocabulary line %d: no term before %q", n+1, "=")
		}
		for a := range strings.SplitSeq(alts, ",") {
			if a = clean(a); a != "" && !strings.EqualFold(a, t.Text) {
				t.SoundsLike = append(t.SoundsLike, a)
			}
		}
		for _, s := range append([]string{t.Text}, t.SoundsLike...) {
			if len(s) > MaxTermLen {
				return nil, fmt.Errorf("vocabulary line %d: %q is longer than %d bytes", n+1, s[:20]+"…", MaxTermLen)
			}
			if strings.ContainsFunc(s, func(r rune) bool { return r < ' ' }) {
				return nil, fmt.Errorf("vocabulary line %d: control characters in %q", n+1, s)
			}
		}
		key := strings.ToLower(t.Text)
		if i, ok := seen[key]; ok {
			terms[i].SoundsLike = append(terms[i].SoundsLike, t.SoundsLike...)
			continue
		}
		if len(terms) == MaxTerms {
			return nil, fmt.Errorf("vocabulary: more than %d terms", MaxTerms)
		}
		seen[key] = len(terms)
		terms = append(terms, t)
	}
	return terms, nil
}

// clean collapses runs of white space.
func clean(s string) string { return strings.Join(strings.Fields(s), " ") }

// Format writes terms back as a list (the export format; Parse reads it).
func Format(terms []Term) string {
	var b strings.Builder
	for _, t := range terms {
		b.WriteString(t.Text)
		if len(t.SoundsLike) > 0 {
			b.WriteString(" = ")
			b.WriteString(strings.Join(t.SoundsLike, ", "))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// Merge joins lists, earlier ones first (a mode's terms before the global
// list: most relevant first), dropping later duplicates.
func Merge(lists ...[]Term) []Term {
	var out []Term
	seen := map[string]bool{}
	for _, l := range lists {
		for _, t := range l {
			if k := strings.ToLower(t.Text); !seen[k] {
				seen[k] = true
				out = append(out, t)
			}
		}
	}
	return out
}
