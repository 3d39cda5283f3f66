package speechkit

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/whisper/mel"
	"github.com/harkapp/hark/internal/shared"
	sk "github.com/harkapp/hark/internal/speechkit"
)

// melTol bounds |Hark − trainer| in log-mel units (values span about
// -1.5..1.5): the trainer's STFT runs in float32, Hark's in float64; a
// different front end (window, padding, filters, clamp) differs by 0.1 or more.
const melTol = 2e-4

// requireTrainerMel checks Hark's log-mel of 16 kHz samples x, as
// Transcribe reads a clip's window (the content frames of LogMel with 30 s
// of padding), against the trainer's (melcheck.py: float32 [80][frames]).
func requireTrainerMel(t *testing.T, f *mel.MelFilters, x []float32, want []float32, what string) {
	t.Helper()
	nf := len(x) / mel.HopLength
	require.Len(t, want, 80*nf, what)
	s, err := mel.LogMel(x, f, 480000)
	require.NoError(t, err)
	got := s.Window(0, nf, nf)
	var worst float64
	at := 0
	for i := range want {
		if d := math.Abs(float64(got[i] - want[i])); d > worst || math.IsNaN(d) {
			worst, at = d, i
		}
	}
	t.Logf("%s: %d frames, max |Hark - trainer| %.3g", what, nf, worst)
	require.LessOrEqual(t, worst, melTol, "%s: mel %d frame %d: trainer %g Hark %g", what, at/nf, at%nf, want[at], got[at])
}

func melFilters(t *testing.T) *mel.MelFilters {
	f, err := mel.LoadMelFilters(shared.Path(t, "whisper-kit", "assets", "mel_filters.npz"), 80)
	require.NoError(t, err)
	return f
}

// Hark's log-mel of an evaluation sentence equals the trainer's
// (testdata/speechkit/e093.mel.f32, written by melcheck.py from the same
// samples of passage.flac; the held-out voice's shortest sentence).
func TestTrainerMel(t *testing.T) {
	ev, x := sk.LoadSet(t)
	want, err := os.ReadFile(filepath.Join("..", "..", "testdata", "speechkit", "e093.mel.f32"))
	require.NoError(t, err)
	for _, s := range ev.Sentences {
		if s.ID == "e093" {
			requireTrainerMel(t, melFilters(t), x[s.Start:s.End], ggml.BytesF32(want), s.ID)
			return
		}
	}
	t.Fatal("no sentence e093")
}

// HARK_SPEECHKIT_MELCHECK names a folder melcheck.py wrote (NAME.pcm and
// NAME.mel.f32: freshly rendered sentences in training voices); each clip's
// log-mel must equal the trainer's. Run by hand after changing the
// renderer or the trainer's front end (README.md says how).
func TestTrainerMelRendered(t *testing.T) {
	dir := os.Getenv("HARK_SPEECHKIT_MELCHECK")
	if dir == "" {
		t.Skip("HARK_SPEECHKIT_MELCHECK is not set (a folder written by melcheck.py)")
	}
	pcms, err := filepath.Glob(filepath.Join(dir, "*.pcm"))
	require.NoError(t, err)
	require.NotEmpty(t, pcms)
	f := melFilters(t)
	for _, p := range pcms {
		raw, err := os.ReadFile(p)
		require.NoError(t, err)
		x := make([]float32, len(raw)/2)
		for i := range x {
			x[i] = float32(int16(binary.LittleEndian.Uint16(raw[2*i:]))) / 32768
		}
		want, err := os.ReadFile(strings.TrimSuffix(p, ".pcm") + ".mel.f32")
		require.NoError(t, err)
		requireTrainerMel(t, f, x, ggml.BytesF32(want), filepath.Base(p))
	}
}
