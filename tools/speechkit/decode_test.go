package speechkit

import (
	"os"

	"github.com/harkapp/hark/engine/whisper"
)

// textOnly is the decode train.py's greedy() does and whisper.cpp's
// `-nt -sns` does: text tokens only (no timestamp is ever sampled),
// greedy, the non-speech tokens suppressed, at most 120 tokens (an
// evaluation sentence has at most 32 words).
func textOnly(f *whisper.File) whisper.DecodeOptions {
	sp := f.Vocab.Specials()
	suppress := append(f.Vocab.DefaultSuppress(), sp.NoTimestamps)
	for ts := sp.TimestampBegin; ts < int32(f.H.NVocab); ts++ {
		suppress = append(suppress, ts)
	}
	return whisper.DecodeOptions{WithoutTimestamps: true, Suppress: suppress,
		SuppressBlank: f.Vocab.SuppressBlank(), SampleLen: 120}
}

// greedy is what `hark transcribe --beam 1 --no-fallback` does: the
// reference's options (timestamps, the previous text as the prompt), one
// beam at temperature 0 without fallback, English.
func greedy() whisper.TranscribeOptions {
	opt := whisper.DefaultTranscribeOptions()
	opt.BeamSize = 1
	opt.Temperatures = []float32{0}
	opt.Language = "en"
	return opt
}

// FullEnv (HARK_SPEECHKIT_FULL=1) makes the tests that decode a subset of
// the evaluation sentences, to stay within CI's time, decode all of them:
// README.md's figures come from such a run.
const FullEnv = "HARK_SPEECHKIT_FULL"

// inCI reports whether sentence i is decoded: always with FullEnv set,
// else when inSubset says so.
func inCI(i int, inSubset func(int) bool) bool { return os.Getenv(FullEnv) != "" || inSubset(i) }
