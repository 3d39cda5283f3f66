package serve

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

// The transcription endpoint's "vocabulary" field reaches the decoder (the
// kit model, never prompted with a glossary in training, decodes other
// text; see README, Vocabulary) and a bad list is the client's error.
func TestTranscriptionVocabulary(t *testing.T) {
	_, url := startServer(t, Config{})
	wav, err := os.ReadFile(shared.Path(t, "audio", "jfk.wav"))
	require.NoError(t, err)
	text := func(fields ...string) string {
		st, b := postForm(t, url+"/v1/audio/transcriptions", wav, append([]string{"model", "tiny", "temperature", "0"}, fields...)...)
		require.Equal(t, 200, st, "%s", b)
		var r struct{ Text string }
		require.NoError(t, json.Unmarshal(b, &r))
		return r.Text
	}
	require.Equal(t, jfkText, text())
	require.NotEqual(t, jfkText, text("vocabulary", "Americans\nComrades = fellow\n"))

	st, b := postForm(t, url+"/v1/audio/transcriptions", wav, "model", "tiny", "vocabulary", "= no term\n")
	e := requireAPIError(t, st, 400, b)
	require.Equal(t, "vocabulary", e["param"])
}
