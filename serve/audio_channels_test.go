package serve

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
	"github.com/harkapp/hark/internal/testaudio"
)

// twoChannels is a stereo 16-kHz WAV holding one kit clip a channel, each
// from 0 s (the kit model knows a clip only from a window's start).
func twoChannels(t *testing.T, left, right string) []byte {
	return stereo(t, 0, testaudio.Clip{Ch: 0, Name: left}, testaudio.Clip{Ch: 1, Name: right})
}

// stereo is testaudio.Stereo's file.
func stereo(t *testing.T, secs float64, clips ...testaudio.Clip) []byte {
	raw, err := os.ReadFile(testaudio.Stereo(t, secs, clips...))
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

// TestTranscriptionChannelsGated: the channels field transcribes each
// channel as the gate lets it through, as a meeting's final pass does: a
// channel silent around a clip has the clip's words as its speaker, placed
// where they were said, and none in its silences (where the kit model
// makes memorized sentences up when it is decoded whole).
func TestTranscriptionChannelsGated(t *testing.T) {
	_, base := startServer(t, Config{})
	file, err := os.ReadFile(testaudio.Call(t))
	require.NoError(t, err)
	code, body := postForm(t, base+"/v1/audio/transcriptions", file, "model", "tiny", "response_format", "verbose_json",
		"timestamp_granularities[]", "word", "timestamp_granularities[]", "segment", "channels", "others,you")
	require.Equal(t, http.StatusOK, code, "%s", body)
	t.Logf("%s", body)
	var got struct {
		Duration float64
		Segments []testaudio.Said
		Words    []struct {
			Word, Speaker string
			Start, End    float64
		}
	}
	require.NoError(t, json.Unmarshal(body, &got))
	require.InDelta(t, testaudio.CallSecs, got.Duration, 0.05, "the recording's length")
	testaudio.RequireCall(t, got.Segments)
	var words []testaudio.Said
	for _, w := range got.Words {
		words = append(words, testaudio.Said{Speaker: w.Speaker, Text: w.Word, Start: w.Start, End: w.End})
	}
	testaudio.RequireCall(t, words)
}
