package tokenizer

import (
	"strings"
	"unicode"

	"github.com/dlclark/regexp2"
	"golang.org/x/text/unicode/norm"
)

// normalizer rewrites a fragment of text before pre-tokenization. It is
// applied per fragment between added tokens, as Hugging Face does, which is
// why a Prepend("▁") normalizer marks the start of every fragment.
type normalizer interface {
	normalize(s string) string
}

type normSequence []normalizer

func (q normSequence) normalize(s string) string {
	for _, n := range q {
		s = n.normalize(s)
	}
	return s
}

type normUnicode struct{ form norm.Form }

func (n normUnicode) normalize(s string) string { return n.form.String(s) }

type normPrepend struct{ prefix string }

func (n normPrepend) normalize(s string) string {
	if s == "" {
		return s
	}
	return n.prefix + s
}

type normReplace struct {
	literal string
	re      *regexp2.Regexp // when the pattern is a regex
	with    string
}

func (n normReplace) normalize(s string) string {
	if n.re == nil {
		return strings.ReplaceAll(s, n.literal, n.with)
	}
	out, err := n.re.Replace(s, n.with, -1, -1)
	if err != nil {
		return s
	}
	return out
}

type normLowercase struct{}

func (normLowercase) normalize(s string) string { return strings.ToLower(s) }

type normStrip struct{ left, right bool }

func (n normStrip) normalize(s string) string {
	if n.left {
		s = strings.TrimLeftFunc(s, unicode.IsSpace)
	}
	if n.right {
		s = strings.TrimRightFunc(s, unicode.IsSpace)
	}
	return s
}

// normSPM is SentencePiece's own normalisation for identity-rule models
// (Llama 2): optional whitespace squeezing, a dummy "▁" prefix, and spaces
// escaped as "▁".
type normSPM struct {
	addDummyPrefix, removeExtraSpaces, escapeSpaces bool
}

const metaSpace = "\u2581"

func (n normSPM) normalize(s string) string {
	if n.removeExtraSpaces {
		s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == ' ' }), " ")
	}
	if s == "" {
		return s
	}
	if n.addDummyPrefix {
		s = " " + s
	}
	if n.escapeSpaces {
		s = strings.ReplaceAll(s, " ", metaSpace)
	}
	return s
}
