package app

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/whisper"
)

// Rows written in the former millisecond shape read as the engine's
// segments; the current shape and damaged values read as themselves and
// as none.
func TestDecodeSegments(t *testing.T) {
	old := `[{"startMs":0,"endMs":1500,"text":" Hello","words":[{"startMs":0,"endMs":640,"text":" Hello","prob":0.5}]},{"startMs":1500,"endMs":2250,"text":" there"}]`
	require.Equal(t, []whisper.Segment{
		{ID: 0, Start: 0, End: 1.5, Text: " Hello", Words: []whisper.Word{{Word: " Hello", Start: 0, End: 0.64, Probability: 0.5}}},
		{ID: 1, Start: 1.5, End: 2.25, Text: " there"},
	}, decodeSegments(old))
	cur := `[{"id":0,"seek":0,"start":0.5,"end":2,"text":" Hi","tokens":[1,2],"temperature":0,"avg_logprob":-0.2,"compression_ratio":1,"no_speech_prob":0.1}]`
	require.Equal(t, []whisper.Segment{{Start: 0.5, End: 2, Text: " Hi", Tokens: []int32{1, 2}, AvgLogprob: -0.2, CompressionRatio: 1, NoSpeechProb: 0.1}}, decodeSegments(cur))
	require.Equal(t, []whisper.Segment{}, decodeSegments("not json"))
	require.Equal(t, []whisper.Segment{}, decodeSegments("[]"))
}
