package whisper

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

// TestSelectionMatchesHostOnKitClips: greedy decoding with the filters and
// the choice on the backend (PassSelect) transcribes every shared clip to
// exactly what the host filter and argmax give (Model.hostSelect, the
// reference): tokens, times, log-probabilities and fallback temperatures,
// bit for bit.
func TestSelectionMatchesHostOnKitClips(t *testing.T) {
	testSelectionMatchesHost(t, "transcribe", 1, 3)
}

// The same for beam search (beam 5, the filters in PassFilterBeams) on
// the clips with beam-5 references.
func TestSelectionMatchesHostOnKitClipsBeam5(t *testing.T) {
	testSelectionMatchesHost(t, "transcribe-beam5", 5, 1)
}

func testSelectionMatchesHost(t *testing.T, refDir string, beams, short int) {
	f, m := loadKitBeams(t, "ggml-kit-tiny.en-f16.bin", beams)
	refs, err := filepath.Glob(filepath.Join(shared.Dir(t), "whisper-kit", "reference", refDir, "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, refs)
	if testing.Short() {
		refs = refs[:short]
	}
	opt := DefaultTranscribeOptions()
	opt.Language = "en"
	opt.BeamSize = beams
	for _, ref := range refs {
		name := strings.TrimSuffix(filepath.Base(ref), ".json")
		run := func(host bool) *Result {
			m.hostSelect = host
			defer func() { m.hostSelect = false }()
			r, err := f.TranscribeFile(context.Background(), m, shared.Path(t, "audio", name+".wav"), opt)
			require.NoError(t, err, name)
			return r
		}
		want, got := run(true), run(false)
		require.NotEmpty(t, want.Segments, name)
		require.Equal(t, want, got, name)
	}
}
