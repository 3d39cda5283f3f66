package rewrite

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/whisper"
)

// timed makes the words of text, each 0.3 s long, with gap seconds of
// silence before the i-th word where gaps names i (0.05 s elsewhere).
func timed(text string, gaps map[int]float64) []whisper.Word {
	var out []whisper.Word
	t := 0.0
	for i, w := range strings.Fields(text) {
		gap, ok := gaps[i]
		if !ok {
			gap = 0.05
		}
		t += gap
		out = append(out, whisper.Word{Word: " " + w, Start: t, End: t + 0.3, Probability: 0.9})
		t += 0.3
	}
	return out
}

// Command phrases inside a sentence are words; set apart (by punctuation,
// pauses, or being the whole dictation) they are commands.
func TestCommandsStandAlone(t *testing.T) {
	cases := []struct {
		name string
		text string
		gaps map[int]float64 // nil: no word times (typed text)
		want string
	}{
		{"a new line of shoes", "We launched a new line of shoes.", nil, "We launched a new line of shoes."},
		{"a new line of shoes, fluent", "We launched a new line of shoes.", map[int]float64{}, "We launched a new line of shoes."},
		{"the new paragraph starts", "The new paragraph starts here.", nil, "The new paragraph starts here."},
		{"the new paragraph starts, fluent", "The new paragraph starts here.", map[int]float64{}, "The new paragraph starts here."},
		{"scratch that itch", "I need to scratch that itch. Done.", map[int]float64{}, "I need to scratch that itch. Done."},
		{"a pause on one side only", "We launched a new line of shoes.", map[int]float64{3: 0.6}, "We launched a new line of shoes."},
		{"a sentence ending in the phrase", "Press enter for a new line.", nil, "Press enter for a new line."},
		{"its own utterance", "New line.", map[int]float64{}, "\n"},
		{"its own utterance, typed", "new paragraph", nil, "\n\n"},
		{"unpunctuated, set apart by pauses", "Dear Anna new line thanks for the notes", map[int]float64{2: 0.6, 4: 0.5}, "Dear Anna\nThanks for the notes"},
		{"pauses just under the threshold", "Dear Anna new line thanks", map[int]float64{2: CommandPause - 0.1, 4: CommandPause - 0.1}, "Dear Anna new line thanks"},
		{"punctuation before, pause after", "Dear Anna, new line thanks", map[int]float64{4: 0.5}, "Dear Anna\nThanks"},
		{"the second of two is the command", "A new line of shoes. New paragraph. Second point.", map[int]float64{5: 0.5, 7: 0.5}, "A new line of shoes.\n\nSecond point."},
		{"scratch that, set apart", "Keep this. Drop this scratch that", map[int]float64{4: 0.7}, "Keep this."},
	}
	for _, c := range cases {
		w, err := New(Options{Commands: true})
		require.NoError(t, err, c.name)
		var words []whisper.Word
		if c.gaps != nil {
			words = timed(c.text, c.gaps)
		}
		require.Equal(t, c.want, w.ApplyHeard(c.text, words), c.name)
	}
}

func TestApart(t *testing.T) {
	got := Apart(timed("So, new line. A new line of shoes. Newline", map[int]float64{1: 0.5, 3: 0.5, 8: 0.5}))
	require.Equal(t, []Apartness{{Before: true, After: true}, {}, {Before: true, After: true}}, got)
}

// When the text no longer has the phrases heard (a replacement made one),
// the word times cannot tell which is which: punctuation decides.
func TestCommandsTimesDoNotMatch(t *testing.T) {
	w, err := New(Options{Commands: true, Rules: []Rule{{From: "next line", To: "new line", WholeWord: true, IgnoreCase: true}}})
	require.NoError(t, err)
	words := timed("A. Next line. B. A new line of shoes.", map[int]float64{1: 0.5, 3: 0.5})
	require.Equal(t, "A.\nB. A new line of shoes.", w.ApplyHeard("A. Next line. B. A new line of shoes.", words))
}
