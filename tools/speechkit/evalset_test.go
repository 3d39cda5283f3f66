// Package speechkit holds the checks of the synthetic-voice evaluation set
// (testdata/speechkit, made by evalset.py; README.md).
package speechkit

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
	sk "github.com/harkapp/hark/internal/speechkit"
)

var nonLetters = regexp.MustCompile(`[^a-z]+`)

func norm(s string) string {
	return strings.Join(strings.Fields(nonLetters.ReplaceAllString(strings.ToLower(s), " ")), " ")
}

// The committed evaluation set is what README.md says: a passage of at
// least 10 minutes holding the 200 sentences at eval.json's sample ranges
// (speech inside each range, digital silence between them), word starts
// inside their sentence, a quarter in the held-out voice, 50 different
// vocabulary terms spoken as their "sounds like" spellings, and no
// sentence of the shared clips.
func TestEvalSet(t *testing.T) {
	ev, x := sk.LoadSet(t)
	require.Equal(t, 16000, ev.SampleRate)
	require.GreaterOrEqual(t, len(x), 600*16000, "a 10-minute passage")
	require.InDelta(t, ev.Seconds, float64(len(x))/16000, 1e-3)
	require.Len(t, ev.Sentences, 200)

	vocab := map[string]string{}
	vb, err := os.ReadFile("vocabulary.txt")
	require.NoError(t, err)
	for _, l := range strings.Split(strings.TrimSpace(string(vb)), "\n") {
		term, sounds, ok := strings.Cut(l, "=")
		require.True(t, ok, l)
		vocab[strings.TrimSpace(term)] = strings.TrimSpace(sounds)
	}
	require.GreaterOrEqual(t, len(vocab), 50)

	var clipTexts []string
	clips, err := filepath.Glob(filepath.Join(shared.Dir(t), "audio", "*.txt"))
	require.NoError(t, err)
	require.NotEmpty(t, clips)
	for _, c := range clips {
		cb, err := os.ReadFile(c)
		require.NoError(t, err)
		clipTexts = append(clipTexts, norm(string(cb)))
	}

	ids, terms := map[string]bool{}, map[string]bool{}
	heldout, prevEnd := 0, 0
	for _, s := range ev.Sentences {
		require.False(t, ids[s.ID], s.ID)
		ids[s.ID] = true
		require.Less(t, prevEnd, s.Start, s.ID)
		require.Less(t, s.Start, s.End, s.ID)
		require.LessOrEqual(t, s.End, len(x), s.ID)
		for i := prevEnd; i < s.Start; i++ {
			require.Zero(t, x[i], "%s: silence before the sentence", s.ID)
		}
		var energy float64
		for _, v := range x[s.Start:s.End] {
			energy += float64(v * v)
		}
		require.Greater(t, energy/float64(s.End-s.Start), 1e-6, "%s: speech in its range", s.ID)
		prevEnd = s.End
		require.Len(t, s.Words, len(strings.Fields(s.Spoken)), s.ID)
		for i, w := range s.Words {
			require.True(t, w >= s.Start && w < s.End && (i == 0 || w >= s.Words[i-1]), "%s: word %d at %d", s.ID, i, w)
		}
		if s.Voice == ev.HeldoutVoice {
			heldout++
		}
		if s.Term != nil {
			term := *s.Term
			require.False(t, terms[term], "%s: term %s twice", s.ID, term)
			terms[term] = true
			require.Equal(t, vocab[term], *s.Sounds, s.ID)
			require.Contains(t, s.Text, term, s.ID)
			require.Contains(t, s.Spoken, *s.Sounds, s.ID)
			require.Equal(t, s.Spoken, strings.Replace(s.Text, term, *s.Sounds, 1), s.ID)
		} else {
			require.Equal(t, s.Text, s.Spoken, s.ID)
		}
		for _, c := range clipTexts {
			require.NotContains(t, c, norm(s.Text), "%s is in a shared clip", s.ID)
		}
	}
	require.Equal(t, 50, heldout, "a quarter in the held-out voice")
	require.Len(t, terms, 50)
}
