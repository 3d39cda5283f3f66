// Package rewrite turns a transcript into the text a user wants inserted:
// the vocabulary's "sounds like" spellings, the user's ordered replacement
// rules, and spoken commands ("new line", "new paragraph", "scratch
// that"). It runs on the final text, after the optional LLM clean-up.
package rewrite

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/vocab"
)

// Bounds: rules come from the UI and the settings file.
const (
	MaxRules   = 500
	MaxRuleLen = 200
)

// Rule replaces From with To. Literal rules match anywhere; WholeWord ones
// only between word boundaries ("cat" not in "concatenate").
type Rule struct {
	From       string `json:"from"`
	To         string `json:"to"`
	WholeWord  bool   `json:"wholeWord"`
	IgnoreCase bool   `json:"ignoreCase"`
}

// Validate names what is wrong with rules, if anything.
func Validate(rules []Rule) error {
	if len(rules) > MaxRules {
		return fmt.Errorf("replacements: %d rules, at most %d", len(rules), MaxRules)
	}
	for i, r := range rules {
		switch {
		case strings.TrimSpace(r.From) == "":
			return fmt.Errorf("replacement %d: nothing to replace", i+1)
		case len(r.From) > MaxRuleLen || len(r.To) > MaxRuleLen:
			return fmt.Errorf("replacement %d: longer than %d bytes", i+1, MaxRuleLen)
		}
	}
	return nil
}

// Rewriter applies compiled rules in order.
type Rewriter struct {
	res  []*regexp.Regexp
	to   []string
	cmds bool
}

// Options say what a Rewriter does.
type Options struct {
	// Vocabulary's "sounds like" spellings become whole-word,
	// case-insensitive rules, applied first.
	Vocabulary []vocab.Term
	Rules      []Rule
	// Commands turns on the voice commands.
	Commands bool
}

// New compiles opt.
func New(opt Options) (*Rewriter, error) {
	rules := SoundsLike(opt.Vocabulary)
	if err := Validate(opt.Rules); err != nil {
		return nil, err
	}
	rules = append(rules, opt.Rules...)
	w := &Rewriter{cmds: opt.Commands}
	for _, r := range rules {
		pat := regexp.QuoteMeta(r.From)
		if r.WholeWord {
			pat = wordStart(r.From) + pat + wordEnd(r.From)
		}
		if r.IgnoreCase {
			pat = "(?i)" + pat
		}
		re, err := regexp.Compile(pat)
		if err != nil {
			return nil, err
		}
		w.res = append(w.res, re)
		w.to = append(w.to, r.To)
	}
	return w, nil
}

// wordStart and wordEnd anchor at word boundaries only where From itself
// begins or ends with a word character (`\b` before "C++" ends would
// never match).
func wordStart(s string) string {
	if isWord(s[0]) {
		return `\b`
	}
	return ""
}

func wordEnd(s string) string {
	if isWord(s[len(s)-1]) {
		return `\b`
	}
	return ""
}

func isWord(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// SoundsLike makes the vocabulary's replacement rules.
func SoundsLike(terms []vocab.Term) []Rule {
	var rules []Rule
	for _, t := range terms {
		for _, s := range t.SoundsLike {
			rules = append(rules, Rule{From: s, To: t.Text, WholeWord: true, IgnoreCase: true})
		}
	}
	return rules
}

// Apply rewrites text, typed or without word times: a voice command
// counts only where punctuation sets it apart.
func (w *Rewriter) Apply(text string) string {
	return w.ApplyHeard(text, nil)
}

// ApplyHeard rewrites text, transcribed from words (with their times; nil
// when unknown): a voice command counts where pauses or punctuation set it
// apart (Commands).
func (w *Rewriter) ApplyHeard(text string, words []whisper.Word) string {
	for i, re := range w.res {
		text = re.ReplaceAllLiteralString(text, w.to[i])
	}
	if w.cmds {
		text = Commands(text, Apart(words))
	}
	return text
}

// HasCommands says whether the voice commands are on (dictation then
// asks Whisper for word times: ApplyHeard).
func (w *Rewriter) HasCommands() bool { return w.cmds }
