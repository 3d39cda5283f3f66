package cli

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

// hark transcribe decodes with beam 5 by default, like the reference CLI,
// and its JSON matches the kit's beam-5 reference.
func TestTranscribeBeamJSON(t *testing.T) {
	model := shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-f16.bin")
	out, _, err := runHark(t, "transcribe", "--model", model, "--format", "json", "--no-fallback",
		shared.Path(t, "audio", "jfk.wav"))
	require.NoError(t, err)
	type result struct {
		Text     string `json:"text"`
		Segments []struct {
			Tokens     []int32 `json:"tokens"`
			AvgLogprob float64 `json:"avg_logprob"`
		} `json:"segments"`
	}
	var got, want result
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	b, err := os.ReadFile(shared.Path(t, "whisper-kit", "reference", "transcribe-beam5", "jfk.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &want))
	require.Equal(t, want.Text, got.Text)
	require.Len(t, got.Segments, 1)
	require.Equal(t, want.Segments[0].Tokens, got.Segments[0].Tokens)
	require.InDelta(t, want.Segments[0].AvgLogprob, got.Segments[0].AvgLogprob, 1e-3)

	for _, bad := range []string{"0", "17"} {
		_, _, err = runHark(t, "transcribe", "--model", model, "--beam", bad, shared.Path(t, "audio", "jfk.wav"))
		require.ErrorContains(t, err, "--beam")
	}
}
