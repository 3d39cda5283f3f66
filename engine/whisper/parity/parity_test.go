package parity

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/engine/cpu"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/engine/whisper/mel"
	"github.com/harkapp/hark/internal/shared"
)

// reference is what tools/parity/whisper_hf.py recorded with Hugging Face
// transformers for one synthetic model and jfk.wav.
type reference struct {
	Model   string         `json:"model"`
	HParams map[string]int `json:"hparams"`
	LogMel  struct {
		Frames []int       `json:"frames"`
		Values [][]float64 `json:"values"` // [frame][mel]
	} `json:"logmel"`
	Encoder struct {
		Rows   []int       `json:"rows"`
		Values [][]float64 `json:"values"`
	} `json:"encoder"`
	Language struct {
		Index int   `json:"index"`
		Token int32 `json:"token"`
	} `json:"language"`
	Logits map[string]struct {
		Prompt []int32   `json:"prompt"`
		IDs    []int     `json:"ids"`
		Values []float64 `json:"values"`
	} `json:"logits"`
	Greedy map[string]struct {
		Prompt []int32 `json:"prompt"`
		Tokens []int32 `json:"tokens"`
	} `json:"greedy"`
}

// closeTo checks got against want within tol × max|want|.
func closeTo(t *testing.T, want, got []float64, tol float64, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	var maxRef, maxDiff float64
	for i := range want {
		maxRef = math.Max(maxRef, math.Abs(want[i]))
		d := math.Abs(want[i] - got[i])
		require.False(t, math.IsNaN(d), "%s: NaN at %d", what, i)
		maxDiff = math.Max(maxDiff, d)
	}
	t.Logf("%s: max |diff| %.3g of max |ref| %.3g (%.2g relative)", what, maxDiff, maxRef, maxDiff/maxRef)
	require.LessOrEqual(t, maxDiff, tol*maxRef, what)
}

// Synthetic models of the shapes the kit lacks (multilingual vocabulary,
// large-v3's 128 mel bins and 51866 tokens, turbo's shallow decoder),
// written by Hark's GGML writer, give the same log-mel, encoder output,
// logits, detected language and greedy tokens as transformers on the same
// files.
func TestAgainstTransformers(t *testing.T) {
	assets := shared.Path(t, "whisper-kit", "assets")
	samples, err := audio.Load16k(shared.Path(t, "audio", "jfk.wav"))
	require.NoError(t, err)
	backend := cpu.New(cpu.Options{})
	defer backend.Close()
	for _, c := range Configs {
		t.Run(c.Name, func(t *testing.T) {
			var ref reference
			shared.ReadJSON(t, filepath.Join("testdata", c.Name+".json.gz"), &ref)
			require.Equal(t, c.H.NVocab, ref.HParams["n_vocab"])
			require.Equal(t, c.H.NMels, ref.HParams["n_mels"])
			require.Equal(t, c.H.NTextLayer, ref.HParams["n_text_layer"])

			path := filepath.Join(t.TempDir(), c.Name+".bin")
			require.NoError(t, Write(c, assets, path))
			f, err := whisper.OpenFile(path)
			require.NoError(t, err)
			defer f.Close()
			m, err := f.Load(backend, whisper.Options{})
			require.NoError(t, err)
			defer m.Close()

			// Log-mel: transformers pads the audio to 30 s, i.e. the first
			// 3000 frames of the spectrogram of audio + 30 s of silence.
			filters, err := mel.NewMelFilters(int(f.Mel.NMel), f.Mel.Data)
			require.NoError(t, err)
			spec, err := mel.LogMel(samples, filters, whisper.WindowSecs*whisper.SampleRate)
			require.NoError(t, err)
			window := spec.Window(0, 3000, 3000)
			var wantMel, gotMel []float64
			for i, fr := range ref.LogMel.Frames {
				for k, v := range ref.LogMel.Values[i] {
					wantMel = append(wantMel, v)
					gotMel = append(gotMel, float64(window[k*3000+fr]))
				}
			}
			closeTo(t, wantMel, gotMel, 1e-4, "log-mel")

			require.NoError(t, m.Encode(window))
			enc := make([]float32, c.H.NAudioCtx*c.H.NAudioState)
			require.NoError(t, m.EncoderOutput(enc))
			var wantEnc, gotEnc []float64
			for i, r := range ref.Encoder.Rows {
				for k, v := range ref.Encoder.Values[i] {
					wantEnc = append(wantEnc, v)
					gotEnc = append(gotEnc, float64(enc[r*c.H.NAudioState+k]))
				}
			}
			closeTo(t, wantEnc, gotEnc, 1e-4, "encoder output")

			for name, lr := range ref.Logits {
				logits, err := m.Prompt(lr.Prompt, 0)
				require.NoError(t, err)
				got := make([]float64, len(lr.IDs))
				for i, id := range lr.IDs {
					got[i] = float64(logits[id])
				}
				closeTo(t, lr.Values, got, 1e-4, "logits after "+name)
			}

			lang, _, err := m.DetectLanguage()
			require.NoError(t, err)
			require.Equal(t, whisper.Languages[ref.Language.Index], lang, "detected language")

			for name, g := range ref.Greedy {
				toks := append([]int32(nil), g.Prompt...)
				logits, err := m.Prompt(toks, 0)
				require.NoError(t, err)
				var out []int32
				for range g.Tokens {
					next := argmax(logits)
					out = append(out, next)
					logits, err = m.Prompt([]int32{next}, len(toks))
					require.NoError(t, err)
					toks = append(toks, next)
				}
				require.Equal(t, g.Tokens, out, "greedy tokens, task %s", name)
			}
		})
	}
}

func argmax(s []float32) int32 {
	best := 0
	for i, v := range s {
		if v > s[best] {
			best = i
		}
	}
	return int32(best)
}
