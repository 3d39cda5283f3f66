package whisper

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

// wordErrorRate is the word-level edit distance over the reference length,
// on lower-cased words with surrounding punctuation removed.
func wordErrorRate(ref, hyp string) float64 {
	norm := func(s string) []string {
		var out []string
		for _, w := range strings.Fields(strings.ToLower(s)) {
			if w = strings.Trim(w, ".,;:!?\"'()-"); w != "" {
				out = append(out, w)
			}
		}
		return out
	}
	r, h := norm(ref), norm(hyp)
	if len(r) == 0 {
		return float64(len(h))
	}
	prev := make([]int, len(h)+1)
	cur := make([]int, len(h)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(r); i++ {
		cur[0] = i
		for j := 1; j <= len(h); j++ {
			cost := 1
			if r[i-1] == h[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return float64(prev[len(h)]) / float64(len(r))
}

func TestWordErrorRate(t *testing.T) {
	require.Zero(t, wordErrorRate("Ask not, what.", "ask not what"))
	require.InDelta(t, 0.25, wordErrorRate("a b c d", "a x c d"), 1e-12)
	require.InDelta(t, 0.5, wordErrorRate("a b c d", "a b"), 1e-12)
}

// Real files in every container: lossless encodings of kit clips give the
// target text exactly; lossy ones (MP3 and Ogg Vorbis at common bitrates)
// stay within 10% word error rate. The files are made with ffmpeg, which
// CI installs. Each clip is a parallel subtest; a file that decodes to a
// window already encoded (the lossless ones) restores that encoder pass
// (encodeMemo) and is decoded again.
func TestContainersTranscribe(t *testing.T) {
	t.Parallel()
	ffmpeg, err := exec.LookPath("ffmpeg")
	require.NoError(t, err, "ffmpeg is needed to make the test files (apt-get install ffmpeg)")
	opt := DefaultTranscribeOptions()
	opt.Language = "en"
	clips := []string{"jfk", "librispeech-1089-134686-0000"}
	if testing.Short() {
		clips = clips[:1]
	}
	variants := []struct {
		name, ext string
		args      []string
		lossy     bool
	}{
		{"s24", "wav", []string{"-c:a", "pcm_s24le"}, false},
		{"f32", "wav", []string{"-c:a", "pcm_f32le"}, false},
		{"stereo", "wav", []string{"-ac", "2", "-c:a", "pcm_s16le"}, false},
		{"flac", "flac", []string{"-c:a", "flac"}, false},
		{"mp3-128k", "mp3", []string{"-c:a", "libmp3lame", "-b:a", "128k"}, true},
		{"vorbis-q4", "ogg", []string{"-c:a", "libvorbis", "-q:a", "4"}, true},
		// Containers only ffmpeg decodes: AAC in M4A, Opus in WebM, and a
		// video file with an H.264 track beside the AAC audio.
		{"aac", "m4a", []string{"-c:a", "aac", "-b:a", "128k"}, true},
		{"opus", "webm", []string{"-c:a", "libopus", "-b:a", "64k"}, true},
		{"video", "mp4", []string{"-f", "lavfi", "-i", "color=c=black:s=64x64:r=5", "-shortest",
			"-map", "1:v", "-map", "0:a", "-c:v", "libx264", "-c:a", "aac", "-b:a", "128k"}, true},
	}
	for _, clip := range clips {
		t.Run(clip, func(t *testing.T) {
			t.Parallel()
			f, m := loadKit(t, "ggml-kit-tiny.en-q8_0.bin")
			kitMemoEncodes(t, m, "ggml-kit-tiny.en-q8_0.bin")
			var ref refResult
			readJSON(t, shared.Path(t, "whisper-kit", "reference", "transcribe", clip+".json"), &ref)
			want := strings.TrimSpace(ref.Text)
			for _, v := range variants {
				out := filepath.Join(t.TempDir(), clip+"."+v.name+"."+v.ext)
				args := append([]string{"-v", "error", "-y", "-i", shared.Path(t, "audio", clip+".wav")}, v.args...)
				cmd := exec.Command(ffmpeg, append(args, out)...)
				b, err := cmd.CombinedOutput()
				require.NoError(t, err, "ffmpeg %s: %s", v.name, b)
				res, err := f.TranscribeFile(context.Background(), m, out, opt)
				require.NoError(t, err, "%s %s", clip, v.name)
				got := strings.TrimSpace(res.Text)
				if v.lossy {
					wer := wordErrorRate(want, got)
					t.Logf("%s %s: WER %.3f", clip, v.name, wer)
					require.LessOrEqual(t, wer, 0.10, "%s %s: %q", clip, v.name, got)
				} else {
					require.Equal(t, want, got, "%s %s", clip, v.name)
				}
			}
		})
	}
}
