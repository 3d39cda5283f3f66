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
	return stereo(t, 0, clipAt{0, 0, left}, clipAt{1, 0, right})
}

// clipAt is a kit clip on channel ch from at seconds.
type clipAt struct {
	ch   int
	at   float64
	name string
}

// stereo is a stereo 16-kHz WAV of secs (at least its clips' length),
// silent but for its clips.
func stereo(t *testing.T, secs float64, clips ...clipAt) []byte {
	n := int(secs * 16000)
	xs := make([][]float32, len(clips))
	for i, c := range clips {
		x, err := audio.Load16k(shared.Path(t, "audio", c.name+".wav"))
		require.NoError(t, err)
		xs[i] = x
		n = max(n, int(c.at*16000)+len(x))
	}
	frames := make([]float32, 2*n)
	for i, c := range clips {
		off := int(c.at * 16000)
		for j, v := range xs[i] {
			frames[2*(off+j)+c.ch] = v
		}
	}
	path := filepath.Join(t.TempDir(), "meeting.wav")
	f, err := audio.CreateFile(path)
	require.NoError(t, err)
	w, err := audio.NewWAVWriterChannels(f, 16000, 2)
	require.NoError(t, err)
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

// TestTranscriptionChannelsGated: the channels field transcribes each
// channel as the gate lets it through, as a meeting's final pass does: a
// channel silent for 3 s, then a clip, then silent to 10 s, has the clip's
// words as its speaker, placed where they were said, and none in its
// silences (where the kit model makes memorized sentences up when it is
// decoded whole).
func TestTranscriptionChannelsGated(t *testing.T) {
	_, base := startServer(t, Config{})
	const at, secs = 3.0, 10.0
	file := stereo(t, secs, clipAt{0, 0, "librivox-sense-and-sensibility-0930"}, clipAt{1, at, "librivox-sense-and-sensibility-0880"})
	clip, err := audio.Load16k(shared.Path(t, "audio", "librivox-sense-and-sensibility-0880.wav"))
	require.NoError(t, err)
	end := at + float64(len(clip))/16000

	code, body := postForm(t, base+"/v1/audio/transcriptions", file, "model", "tiny", "response_format", "verbose_json",
		"timestamp_granularities[]", "word", "timestamp_granularities[]", "segment", "channels", "others,you")
	require.Equal(t, http.StatusOK, code, "%s", body)
	t.Logf("%s", body)
	var got struct {
		Duration float64
		Segments []struct {
			Start, End    float64
			Text, Speaker string
		}
		Words []struct {
			Word, Speaker string
			Start, End    float64
		}
	}
	require.NoError(t, json.Unmarshal(body, &got))
	require.InDelta(t, secs, got.Duration, 0.05, "the recording's length")
	said := map[string]string{}
	for _, s := range got.Segments {
		said[s.Speaker] += strings.ToLower(s.Text)
		if s.Speaker == "You" {
			require.True(t, s.Start >= at-0.5 && s.End <= end+0.5, "You's segment %+v where the clip is (%.1f-%.1f s)", s, at, end)
		}
	}
	require.Contains(t, said["You"], "he was not an ill disposed young man")
	require.Contains(t, said["Others"], "he might even have been made amiable himself")
	require.Len(t, said, 2)
	for _, w := range got.Words {
		if w.Speaker == "You" {
			require.True(t, w.Start >= at-0.5 && w.End <= end+0.5, "You's word %+v where the clip is (%.1f-%.1f s)", w, at, end)
		}
	}
}
