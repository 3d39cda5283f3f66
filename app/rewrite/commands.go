package rewrite

import (
	"regexp"
	"strings"
)

// A spoken command, with the punctuation Whisper puts around it: "Hello.
// New line. Next" -> "Hello.\nNext".
var commandRe = regexp.MustCompile(`(?i)[,;:]?\s*\b(new line|newline|new paragraph|scratch that)\b[.,!?;:]?[ \t]*`)

// Commands applies the voice commands: "new line" and "new paragraph"
// insert line breaks; "scratch that" deletes the sentence said before it
// in the same dictation (back to the previous . ! ? or line break).
func Commands(text string) string {
	var b strings.Builder
	last := 0
	for _, m := range commandRe.FindAllStringSubmatchIndex(text, -1) {
		b.WriteString(text[last:m[0]])
		last = m[1]
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
