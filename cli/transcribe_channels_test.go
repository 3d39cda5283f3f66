package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/app/meeting"
	"github.com/harkapp/hark/internal/shared"
	"github.com/harkapp/hark/internal/testaudio"
)

// TestTranscribeChannels: a two-channel meeting file, the call on the
// first channel and the user (from 1 s, over the call's end) on the
// second: --channels others,you labels each side's words and orders the
// lines by time.
func TestTranscribeChannels(t *testing.T) {
	path := testaudio.Stereo(t, 6, testaudio.Clip{Ch: 0, Name: "ljspeech-LJ001-0002"},
		testaudio.Clip{Ch: 1, At: 1, Name: "librivox-sense-and-sensibility-0880"})

	model := shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-q8_0.bin")
	out, _, err := runHark(t, "transcribe", "--model", model, "--beam", "1", "--channels", "others,you", "--format", "md", path)
	require.NoError(t, err)
	t.Logf("%s", out)
	require.True(t, strings.HasPrefix(out, "# meeting.wav\n"))
	low := strings.ToLower(out)
	iO := strings.Index(low, "**[00:00] others:** in being comparatively modern.")
	iY := strings.Index(low, "**[00:01] you:** he was not an ill disposed young man")
	require.GreaterOrEqual(t, iO, 0, "the call's words as Others")
	require.Greater(t, iY, iO, "the user's words as You, after the call's start")

	for _, bad := range []string{"you", "you,you", "you,boss", "you,others,x"} {
		_, _, err = runHark(t, "transcribe", "--model", model, "--channels", bad, path)
		require.ErrorContains(t, err, "--channels")
	}
	_, _, err = runHark(t, "transcribe", "--model", model, "--channels", "you,others", shared.Path(t, "audio", "jfk.wav"))
	require.ErrorContains(t, err, "the file has 1")
}

// TestTranscribeChannelsGated: --channels transcribes each channel as a
// meeting's final pass does, gated: the user's channel, silent around a
// clip, has the clip's words as You, placed where they were said, and no
// line in its silences.
func TestTranscribeChannelsGated(t *testing.T) {
	model := shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-q8_0.bin")
	out, _, err := runHark(t, "transcribe", "--model", model, "--beam", "1", "--channels", "others,you", "--format", "json", testaudio.Call(t))
	require.NoError(t, err)
	t.Logf("%s", out)
	n, err := meeting.ReadNotes(strings.NewReader(out))
	require.NoError(t, err)
	var said []testaudio.Said
	for _, l := range n.Lines {
		said = append(said, testaudio.Said{Speaker: l.Speaker, Text: l.Text, Start: l.Start, End: l.End})
	}
	testaudio.RequireCall(t, said)
}

// TestTranscribeChannelsVocabulary: --channels decodes with the
// transcription's options, --vocabulary's prompt among them (the kit model,
// never prompted with a glossary, is derailed by one: README, Vocabulary).
func TestTranscribeChannelsVocabulary(t *testing.T) {
	path := testaudio.Stereo(t, 0, testaudio.Clip{Ch: 0, Name: "librivox-sense-and-sensibility-0930"},
		testaudio.Clip{Ch: 1, Name: "librivox-sense-and-sensibility-0880"})
	list := filepath.Join(t.TempDir(), "vocab.txt")
	require.NoError(t, os.WriteFile(list, []byte("Americans\nZanzibar\n"), 0o644))
	model := shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-q8_0.bin")
	run := func(args ...string) string {
		out, stderr, err := runHark(t, append([]string{"transcribe", "--model", model, "--beam", "1", "--no-fallback", "--channels", "others,you", "--format", "txt"}, append(args, path)...)...)
		require.NoError(t, err, stderr)
		return out
	}
	plain, steered := run(), run("--vocabulary", list)
	t.Logf("plain:\n%s\nwith the vocabulary:\n%s", plain, steered)
	require.Contains(t, strings.ToLower(plain), "he was not an ill disposed young man")
	require.NotEqual(t, plain, steered, "the vocabulary did not reach the decoder")
}
