package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// AddedToken is a token matched in the text before BPE runs (special
// tokens such as <|im_start|>, and user-defined tokens), with Hugging
// Face's matching flags.
type AddedToken struct {
	ID      int32
	Content string
	Special bool // skipped by DecodeSkipSpecial; not matched when special parsing is off
	// LStrip/RStrip absorb whitespace on that side into the token.
	LStrip, RStrip bool
	// SingleWord only matches when not inside a word.
	SingleWord bool
	// Normalized tokens are matched in normalized text instead of raw text.
	Normalized bool
}

// trieNode is a byte trie over added-token contents.
type trieNode struct {
	next  map[byte]*trieNode
	token int // index into addedSet.tokens, or -1
}

// addedSet matches one class of added tokens (raw or normalized),
// leftmost-longest, as Hugging Face's Aho-Corasick matcher does.
type addedSet struct {
	tokens []AddedToken
	root   *trieNode
}

func newAddedSet(tokens []AddedToken) *addedSet {
	s := &addedSet{tokens: tokens, root: &trieNode{token: -1}}
	for i, t := range tokens {
		if t.Content == "" {
			continue
		}
		n := s.root
		for j := 0; j < len(t.Content); j++ {
			if n.next == nil {
				n.next = map[byte]*trieNode{}
			}
			c, ok := n.next[t.Content[j]]
			if !ok {
				c = &trieNode{token: -1}
				n.next[t.Content[j]] = c
			}
			n = c
		}
		if n.token < 0 {
			n.token = i
		}
	}
	return s
}

// longestAt returns the longest token starting at s[i:], or -1.
func (s *addedSet) longestAt(text string, i int, parseSpecial bool) (tok, end int) {
	tok, end = -1, -1
	n := s.root
	for j := i; j < len(text) && n.next != nil; j++ {
		n = n.next[text[j]]
		if n == nil {
			break
		}
		if n.token >= 0 && (parseSpecial || !s.tokens[n.token].Special) {
			tok, end = n.token, j+1
		}
	}
	return tok, end
}

// fragment is a piece of the input: literal text, or an added token.
type fragment struct {
	text  string
	id    int32 // -1 for text
	first bool  // text that starts the input
}

// split cuts text into fragments around the added tokens it contains.
func (s *addedSet) split(out []fragment, text string, first, parseSpecial bool) []fragment {
	if s == nil || len(s.tokens) == 0 {
		return append(out, fragment{text: text, id: -1, first: first})
	}
	emitted := 0 // text[:emitted] is already in out
	for i := 0; i < len(text); {
		k, end := s.longestAt(text, i, parseSpecial)
		if k < 0 {
			i++
			continue
		}
		t := s.tokens[k]
		start := i
		if t.SingleWord && !isWordBoundary(text, start, end) {
			i = end // the matcher does not look inside a rejected match
			continue
		}
		if t.LStrip {
			for start > emitted {
				r, n := utf8.DecodeLastRuneInString(text[:start])
				if !unicode.IsSpace(r) {
					break
				}
				start -= n
			}
		}
		if t.RStrip {
			for end < len(text) {
				r, n := utf8.DecodeRuneInString(text[end:])
				if !unicode.IsSpace(r) {
					break
				}
				end += n
			}
		}
		if start > emitted {
			out = append(out, fragment{text: text[emitted:start], id: -1, first: first && emitted == 0})
		}
		out = append(out, fragment{id: t.ID})
		emitted, i = end, end
	}
	if emitted < len(text) {
		out = append(out, fragment{text: text[emitted:], id: -1, first: first && emitted == 0})
	}
	return out
}

func isWordChar(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' }

func isWordBoundary(text string, start, end int) bool {
	if start > 0 {
		if r, _ := utf8.DecodeLastRuneInString(text[:start]); isWordChar(r) {
			return false
		}
	}
	if end < len(text) {
		if r, _ := utf8.DecodeRuneInString(text[end:]); isWordChar(r) {
			return false
		}
	}
	return true
}
