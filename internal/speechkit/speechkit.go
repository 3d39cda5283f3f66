// Package speechkit is the test support for the synthetic-voice speech
// model (tools/speechkit, issue #39): its committed q8_0 file, the
// committed evaluation set (testdata/speechkit: eval.json and
// passage.flac), the sentences cut from the passage, and noise added from
// a seed. Tests in any package use it; it fails, never skips, when a file
// is missing.
package speechkit

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/engine/cpu"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/shareddir"
)

// ModelEnv names a q8_0 file to test instead of the committed one (a
// freshly trained model before it is committed).
const ModelEnv = "HARK_SPEECHKIT_Q8"

// ModelName is the committed q8_0 file in Dir.
const ModelName = "ggml-speechkit-q8_0.bin"

// Dir is testdata/speechkit in the repository (the module root's).
func Dir(t testing.TB) string {
	t.Helper()
	root, err := shareddir.ModuleRoot()
	require.NoError(t, err)
	return filepath.Join(root, "testdata", "speechkit")
}

// Path is a file of the repository (elem from the module root), failing
// the test when it does not exist.
func Path(t testing.TB, elem ...string) string {
	t.Helper()
	root, err := shareddir.ModuleRoot()
	require.NoError(t, err)
	p := filepath.Join(append([]string{root}, elem...)...)
	_, err = os.Stat(p)
	require.NoError(t, err, "a file the speechkit tests need is missing")
	return p
}

// ModelPath is $HARK_SPEECHKIT_Q8, or the committed q8_0 file.
func ModelPath(t testing.TB) string {
	t.Helper()
	p := os.Getenv(ModelEnv)
	if p == "" {
		p = filepath.Join(Dir(t), ModelName)
	}
	_, err := os.Stat(p)
	require.NoError(t, err, "the speechkit model (testdata/speechkit/%s, or $%s) is missing", ModelName, ModelEnv)
	return p
}

// Load opens the model (ModelPath) on the CPU backend with threads
// threads, greedy (one beam), closed when the test ends.
func Load(t testing.TB, threads int) (*whisper.File, *whisper.Model) {
	t.Helper()
	f, err := whisper.OpenFile(ModelPath(t))
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	be := cpu.New(cpu.Options{Threads: threads})
	t.Cleanup(be.Close)
	m, err := f.Load(be, whisper.Options{Beams: 1})
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	return f, m
}

// Sentence is one evaluation sentence of eval.json: what it says (Text,
// with the vocabulary term spelt as listed), what was spoken (Spoken, the
// term as its "sounds like" spelling), where it lies in the passage
// (samples Start to End) and each spoken word's start sample.
type Sentence struct {
	ID, Text, Spoken, Voice string
	Term, Sounds            *string
	Start, End              int
	Words                   []int
}

// Set is eval.json.
type Set struct {
	SampleRate   int     `json:"sample_rate"`
	Seconds      float64 `json:"seconds"`
	HeldoutVoice string  `json:"heldout_voice"`
	Sentences    []Sentence
}

// LoadSet reads eval.json and the passage's 16 kHz samples.
func LoadSet(t testing.TB) (Set, []float32) {
	t.Helper()
	dir := Dir(t)
	var ev Set
	b, err := os.ReadFile(filepath.Join(dir, "eval.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &ev))
	x, err := audio.Load16k(filepath.Join(dir, "passage.flac"))
	require.NoError(t, err)
	return ev, x
}

// Clip is the sentence's samples of the passage x.
func (s Sentence) Clip(x []float32) []float32 { return x[s.Start:s.End] }

// WordEnds is each spoken word's end sample: the next word's start, the
// last word's the sentence's end (espeak-ng reports word starts only; the
// gap before the next word is part of the word).
func (s Sentence) WordEnds() []int {
	ends := make([]int, len(s.Words))
	for i := range s.Words {
		if i+1 < len(s.Words) {
			ends[i] = s.Words[i+1]
		} else {
			ends[i] = s.End
		}
	}
	return ends
}
