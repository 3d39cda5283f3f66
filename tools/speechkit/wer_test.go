package speechkit

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
	sk "github.com/harkapp/hark/internal/speechkit"
)

// The offline test's noise: white, 20 dB below each sentence's mean power
// (the trainer's augmentation reached 0 dB), from a seed per sentence.
const (
	werSNR  = 20
	werSeed = 39
)

// werCount is a word error count over a reference word count.
type werCount struct{ edits, words int }

func (c *werCount) add(ref, hyp string) {
	n := len(shared.Words(ref))
	c.edits += int(math.Round(shared.WER(ref, hyp) * float64(n)))
	c.words += n
}

func (c werCount) rate() float64 { return float64(c.edits) / float64(max(1, c.words)) }

// inWERSubset picks the 26 sentences TestSpeechkitWER decodes in CI
// (FullEnv: all 200): those at 1 and 2 mod 16, 13 in the held-out voice
// (1, 17, 33, ...) and 13 in the training voices without a vocabulary term
// (the term sentences, 0, 4, 8, ..., are TestSpeechkitVocabulary's).
func inWERSubset(i int) bool { return i%16 == 1 || i%16 == 2 }

// Bounds above what the committed model (the sixth session's, calls 14-16)
// measured on the CI subset: 0.147 (28/191 words), held-out voice 0.146
// (14/96) (README.md, "Hark's tests"; PyTorch fp32 on all 200 clean
// sentences: 0.161). Tightened from 0.22 and 0.21, which sat above the
// fifth session's model (0.183 and 0.167), and before that from 0.30 and
// 0.32 (the fourth session's model: 0.262 and 0.281). The margin
// allows for another CPU's kernels (another SIMD width rounds q8_0 sums
// differently, which can flip a near tie in a greedy decode).
const (
	werBound        = 0.18
	werHeldoutBound = 0.18
)

// TestSpeechkitWER transcribes evaluation sentences it never trained on,
// with noise added, as `hark transcribe --beam 1 --no-fallback` would
// (greedy, q8_0, CPU, 2 threads), and bounds the word error rate against
// what was spoken, overall and in the held-out voice. The target is
// 10 %; the bounds sit just above what the committed model measured
// (README.md, "The fourth session's model"), so a regression in Hark's
// decoding or front end fails, not the model's known inaccuracy.
func TestSpeechkitWER(t *testing.T) {
	ev, x := sk.LoadSet(t)
	f, m := sk.Load(t, 2)
	opt := greedy()
	var all, held werCount
	for i, s := range ev.Sentences {
		if !inCI(i, inWERSubset) {
			continue
		}
		res, err := f.TranscribeSamples(context.Background(), m, sk.Noisy(s.Clip(x), werSNR, werSeed+uint64(i)), opt)
		require.NoError(t, err, s.ID)
		all.add(s.Spoken, res.Text)
		if s.Voice == ev.HeldoutVoice {
			held.add(s.Spoken, res.Text)
		}
		if testing.Verbose() {
			t.Logf("%s %.2f  %q -> %q", s.ID, shared.WER(s.Spoken, res.Text), s.Spoken, res.Text)
		}
	}
	t.Logf("WER %.4f (%d/%d words), held-out voice %.4f (%d/%d), SNR %d dB", all.rate(), all.edits, all.words,
		held.rate(), held.edits, held.words, werSNR)
	require.LessOrEqual(t, all.rate(), werBound, "WER on unseen sentences")
	require.LessOrEqual(t, held.rate(), werHeldoutBound, "WER in the held-out voice")
}
