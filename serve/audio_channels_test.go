package serve

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/internal/shared"
)

// twoChannels is a stereo 16-kHz WAV holding one kit clip a channel, each
// from 0 s (the kit model knows a clip only from a window's start).
func twoChannels(t *testing.T, left, right string) []byte {
	a, err := audio.Load16k(shared.Path(t, "audio", left+".wav"))
	require.NoError(t, err)
	b, err := audio.Load16k(shared.Path(t, "audio", right+".wav"))
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "meeting.wav")
	f, err := audio.CreateFile(path)
	require.NoError(t, err)
	w, err := audio.NewWAVWriterChannels(f, 16000, 2)
	require.NoError(t, err)
	frames := make([]float32, 0, 2*max(len(a), len(b)))
	for i := range max(len(a), len(b)) {
		var l, r float32
		if i < len(a) {
			l = a[i]
		}
		if i < len(b) {
			r = b[i]
		}
		frames = append(frames, l, r)
	}
	require.NoError(t, w.Write(frames))
	require.NoError(t, w.Close())
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	return raw
}

// TestTranscriptionChannels: the channels field transcribes each channel
// of a two-channel file as its speaker. A request shaped as the openai
// client sends it (verbose_json, both timestamp granularities, the extra
// field) gets segments and words naming their speaker and the text as one
// line a segment; VTT cues carry voice tags. Bad values, a mono file and
// a translation are refused naming the field, without transcribing.
func TestTranscriptionChannels(t *testing.T) {
	_, base := startServer(t, Config{})
	url := base + "/v1/audio/transcriptions"
	// Channel 0 is the call (Others), channel 1 the user (You).
	file := twoChannels(t, "librivox-sense-and-sensibility-0930", "librivox-sense-and-sensibility-0880")

	code, body := postForm(t, url, file, "model", "tiny", "response_format", "verbose_json",
		"timestamp_granularities[]", "word", "timestamp_granularities[]", "segment", "channels", " Others, you")
	require.Equal(t, http.StatusOK, code, "%s", body)
	var got struct {
		Text     string
		Duration float64
		Segments []struct {
			ID      int
			Start   float64
			Text    string
			Speaker string
		}
		Words []struct {
			Word, Speaker string
		}
	}
	require.NoError(t, json.Unmarshal(body, &got))
	t.Logf("%s", body)
	said := map[string]string{}
	for i, s := range got.Segments {
		require.Equal(t, i, s.ID)
		if i > 0 {
			require.GreaterOrEqual(t, s.Start, got.Segments[i-1].Start, "merged by time")
		}
		said[s.Speaker] += strings.ToLower(s.Text)
	}
	require.Contains(t, said["You"], "he was not an ill disposed young man")
	require.Contains(t, said["Others"], "he might even have been made amiable himself")
	require.Len(t, said, 2)
	require.InDelta(t, 3.29, got.Duration, 0.05)
	lines := strings.Split(strings.ToLower(got.Text), "\n")
	require.Len(t, lines, len(got.Segments))
	require.Contains(t, strings.Join(lines, "\n"), "you: he was not an ill disposed young man")
	words := map[string]string{}
	for _, w := range got.Words {
		words[w.Speaker] += " " + strings.ToLower(w.Word)
	}
	require.Contains(t, words["You"], "disposed")
	require.Contains(t, words["Others"], "amiable")

	code, body = postForm(t, url, file, "model", "tiny", "response_format", "vtt", "channels", "others,you")
	require.Equal(t, http.StatusOK, code, "%s", body)
	require.True(t, strings.HasPrefix(string(body), "WEBVTT"), "%s", body)
	require.Contains(t, strings.ToLower(string(body)), "<v you>he was not an ill disposed young man")

	mono, err := os.ReadFile(shared.Path(t, "audio", "jfk.wav"))
	require.NoError(t, err)
	for _, c := range []struct {
		url, channels, msg string
		file               []byte
	}{
		{url, "you", "name the 2 channels", file},
		{url, "you,boss", `unknown speaker "boss"`, file},
		{url, "you,you", "twice", file},
		{url, strings.Repeat("you,", 40), "over 64 characters", file},
		{url, "you,others", "the file has 1", mono},
		{base + "/v1/audio/translations", "you,others", "cannot be combined with translation", file},
	} {
		code, body := postForm(t, c.url, c.file, "model", "tiny", "channels", c.channels)
		e := requireAPIError(t, code, http.StatusBadRequest, body)
		require.Equal(t, "channels", e["param"], "%s", body)
		require.Contains(t, e["message"], c.msg)
	}
}
