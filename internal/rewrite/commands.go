package rewrite

import (
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/harkapp/hark/engine/whisper"
)

// A spoken command phrase. Whether it is a command or words of a sentence
// ("a new line of shoes") is decided by what stands around it (apart).
var commandRe = regexp.MustCompile(`(?i)\b(new line|newline|new paragraph|scratch that)\b`)

// commandWords are commandRe's phrases as heard word by word, in the
// regexp's order of preference.
var commandWords = [][]string{{"new", "line"}, {"newline"}, {"new", "paragraph"}, {"scratch", "that"}}

// CommandPause is the silence, in seconds, that sets a command apart from
// the words around it. Words within a fluent sentence follow each other
// with gaps under about 0.2 s (and Whisper's word times are 20 ms frames
// that drift by a frame or two), while a speaker who dictates a command
// stops for about half a second before and after it: 0.4 s is above the
// first with a margin and below the second.
const CommandPause = 0.4

// Apartness says, for one command phrase heard, whether a pause (or the
// start or end of the dictation) sets it apart on each side.
type Apartness struct{ Before, After bool }

// Apart finds the command phrases in the words heard, in order, and tells
// for each whether pauses set it apart.
func Apart(words []whisper.Word) []Apartness {
	norm := make([]string, len(words))
	for i, w := range words {
		norm[i] = strings.ToLower(strings.TrimFunc(w.Word, func(r rune) bool { return !unicode.IsLetter(r) }))
	}
	var out []Apartness
	for i := 0; i < len(words); {
		n := phraseAt(norm, i)
		if n == 0 {
			i++
			continue
		}
		last := i + n - 1
		out = append(out, Apartness{
			Before: i == 0 || words[i].Start-words[i-1].End >= CommandPause,
			After:  last == len(words)-1 || words[last+1].Start-words[last].End >= CommandPause,
		})
		i += n
	}
	return out
}

// phraseAt is the length in words of the command phrase starting at
// norm[i], 0 when none does.
func phraseAt(norm []string, i int) int {
	for _, p := range commandWords {
		if i+len(p) <= len(norm) && slices.Equal(norm[i:i+len(p)], p) {
			return len(p)
		}
	}
	return 0
}

// Commands applies the voice commands: "new line" and "new paragraph"
// insert line breaks; "scratch that" deletes the sentence said before it
// in the same dictation (back to the previous . ! ? or line break).
//
// A phrase is a command only when it stands alone: on each side it meets
// the start or end of the text, a punctuation mark (Whisper writes one
// where the speaker paused: "Dear Anna, new line. Thanks"), or a pause in
// heard. heard is Apart of the words as timed (nil when unknown: typed
// text, no word times); it is used only when the text holds as many
// phrases as were heard (a replacement or the clean-up may have added or
// removed some, and then which is which is unknown).
func Commands(text string, heard []Apartness) string {
	ms := commandRe.FindAllStringSubmatchIndex(text, -1)
	if len(heard) != len(ms) {
		heard = nil
	}
	var b strings.Builder
	last := 0
	for i, m := range ms {
		var pause Apartness
		if heard != nil {
			pause = heard[i]
		}
		before, after := text[last:m[0]], text[m[1]:]
		// before is empty also right after a command that fired: that
		// one was set apart after it, so this one is before it.
		if !(pause.Before || leftApart(before)) || !(pause.After || rightApart(after)) {
			continue
		}
		// Drop the punctuation Whisper put around the command.
		b.WriteString(strings.TrimRight(strings.TrimRight(before, " \t"), ",;:"))
		last = m[1]
		if after != "" && strings.ContainsRune(".,!?;:", rune(after[0])) {
			last++
		}
		for last < len(text) && (text[last] == ' ' || text[last] == '\t') {
			last++
		}
		switch strings.ToLower(text[m[2]:m[3]]) {
		case "new line", "newline":
			b.WriteString("\n")
		case "new paragraph":
			b.WriteString("\n\n")
		case "scratch that":
			s := dropLastSentence(b.String())
			b.Reset()
			b.WriteString(s)
		}
	}
	b.WriteString(text[last:])
	out := b.String()
	// A line starts with a capital after a command, as Whisper would
	// have written a new sentence.
	lines := strings.Split(out, "\n")
	for i := 1; i < len(lines); i++ {
		lines[i] = capitalise(strings.TrimLeft(lines[i], " "))
	}
	return strings.Trim(strings.Join(lines, "\n"), " ")
}

// leftApart: the text before a phrase ends where a sentence or clause
// does (or is empty).
func leftApart(before string) bool {
	t := strings.TrimRight(before, " \t")
	return t == "" || strings.ContainsRune(".,!?;:\n", rune(t[len(t)-1]))
}

// rightApart: the text after a phrase starts with punctuation or a line
// break (or is empty).
func rightApart(after string) bool {
	t := strings.TrimLeft(after, " \t")
	return t == "" || strings.ContainsRune(".,!?;:\n", rune(t[0]))
}

// dropLastSentence removes the last sentence of s, keeping the end mark
// and line breaks of the one before it.
func dropLastSentence(s string) string {
	t := strings.TrimRight(s, " ")
	body := strings.TrimRight(t, ".!?")
	if body == "" || strings.HasSuffix(t, "\n") {
		return t
	}
	i := strings.LastIndexAny(body, ".!?\n")
	if i < 0 {
		return ""
	}
	return body[:i+1] + " "
}

func capitalise(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
