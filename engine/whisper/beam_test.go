package whisper

import (
	"math"

	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

// A batched beam step gives each beam the logits of its own sequence
// decoded alone, also after the caches were shared out from one prompt
// and re-selected (a permutation with repeats).
func TestBeamStepMatchesSingleSequences(t *testing.T) {
	t.Parallel()
	_, m := loadKitBeams(t, "ggml-kit-tiny.en-f16.bin", 5)
	require.NoError(t, m.Encode(readF32(t, shared.Path(t, "whisper-kit", "reference", "tensors", "jfk.mel.f32"))))
	nv := m.H.NVocab
	prompt := []int32{50257, 50362}
	first := []int32{843, 523, 616, 11, 13}
	src := []int{4, 4, 0, 1, 2}
	second := []int32{523, 616, 5891, 3399, 262}

	// References, one sequence at a time (they use sequence 0's cache).
	single := func(seq []int32) []float32 {
		l, err := m.Prompt(seq, 0)
		require.NoError(t, err)
		return append([]float32(nil), l...)
	}
	var want1, want2 [][]float32
	for b := range 5 {
		want1 = append(want1, single(append(append([]int32(nil), prompt...), first[b])))
		want2 = append(want2, single(append(append([]int32(nil), prompt...), first[src[b]], second[b])))
	}

	_, err := m.Prompt(prompt, 0)
	require.NoError(t, err)
	require.NoError(t, m.broadcastKV(5, len(prompt)))
	got, err := m.StepBeams(first, len(prompt))
	require.NoError(t, err)
	for b := range 5 {
		requireClose(t, want1[b], got[b*nv:(b+1)*nv], 1e-4, "first step")
	}
	require.NoError(t, m.reorderKV(src, len(prompt), len(prompt)+1))
	got, err = m.StepBeams(second, len(prompt)+1)
	require.NoError(t, err)
	for b := range 5 {
		requireClose(t, want2[b], got[b*nv:(b+1)*nv], 1e-4, "after re-selection")
	}

	_, err = m.StepBeams(first[:3], 0)
	require.Error(t, err)
	require.Error(t, m.reorderKV([]int{0, 7}, 0, 1))
	require.Error(t, m.reorderKV([]int{0, 1}, 2, 1))
}

func TestRankSequences(t *testing.T) {
	// -6/3 = -2 beats -3/1; the first of equal scores wins.
	require.Equal(t, 1, rankSequences([]finishedSeq{{tokens: []int32{1}, score: -3}, {tokens: []int32{1, 2, 3}, score: -6},
		{tokens: []int32{4, 5, 6}, score: -6}}))
}

func seqKey(seq []int32) string {
	b := make([]byte, 0, 4*len(seq))
	for _, t := range seq {
		b = append(b, byte(t), byte(t>>8), byte(t>>16), byte(t>>24))
	}
	return string(b)
}

// fakeBeams serves log-probabilities from a table keyed by sequence.
type fakeBeams struct {
	t     *testing.T
	table map[string][]float32
	seqs  [][]int32
}

func (f *fakeBeams) reorder(src []int) error {
	old := f.seqs
	f.seqs = make([][]int32, len(src))
	for d, s := range src {
		f.seqs[d] = append([]int32(nil), old[s]...)
	}
	return nil
}

func (f *fakeBeams) step(feed []int32) ([]float32, error) {
	var out []float32
	for b, tok := range feed {
		f.seqs[b] = append(f.seqs[b], tok)
		row, ok := f.table[seqKey(f.seqs[b])]
		require.True(f.t, ok, "no logits for %v", f.seqs[b])
		out = append(out, row...)
	}
	return out, nil
}

// A search that length-normalised ranking decides: greedy would say
// "a c", the best raw sum is "b" (0.24), the reference's beam search
// returns "a d" (0.18 over 2 tokens beats 0.24 over 1); it stops once
// max_candidates (2) sequences have finished.
func TestBeamSearchAlgorithm(t *testing.T) {
	const eot, nv = 5, 6
	p := beamLogProbs
	const a, b, c, d = 1, 2, 3, 4
	table := map[string][]float32{
		seqKey([]int32{a}):    p(0, 0, .5, .4, .1),
		seqKey([]int32{b}):    p(0, 0, .1, .1, .8),
		seqKey([]int32{a, c}): p(.3, .2, 0, 0, .5),
		seqKey([]int32{a, d}): p(.05, .05, 0, 0, .9),
		seqKey([]int32{b, c}): p(.3, .2, 0, 0, .5),
	}
	// The rows are ranked on the host, an empty filter (none) applied.
	search := func(end int32, patience float64, steps int, first []float32) ([]int32, float32, error) {
		h := &hostBeams{rows: &fakeBeams{t: t, table: table, seqs: make([][]int32, 2)}, f: &logitFilter{}, first: first, nv: nv}
		return h.search(eot, end, 2, patience, steps)
	}
	toks, sum, err := search(0, 1, 100, p(.5, .3, .2, 0, 0))
	require.NoError(t, err)
	require.Equal(t, []int32{a, d}, toks)
	require.InDelta(t, math.Log(.18), float64(sum), 1e-6)

	// Out of steps before enough finished: live beams fill the set.
	toks, sum, err = search(0, 1, 1, p(.5, .3, .2, 0, 0))
	require.NoError(t, err)
	require.Equal(t, []int32{a}, toks)
	require.InDelta(t, math.Log(.5), float64(sum), 1e-6)

	// With an end token (DecodeOptions.EndTimestamp) d, a beam reaching a
	// token at or past it finishes there, that token kept: "a d" finishes
	// at .5×.4 instead of going on to EOT (.18 above).
	toks, sum, err = search(d, 1, 100, p(.5, .3, .2, 0, 0))
	require.NoError(t, err)
	require.Equal(t, []int32{a, d}, toks)
	require.InDelta(t, math.Log(.2), float64(sum), 1e-6)

	// With an end token c, two of the three first candidates (c, d) finish
	// at once and only "a" lives, fewer than the two beams: it fills both
	// (the window failed before), the search goes on (every candidate of
	// "a" then finishes) and the best finished sequence wins.
	toks, sum, err = search(c, 2, 100, p(.1, 0, .5, .4, 0))
	require.NoError(t, err)
	require.Equal(t, []int32{c}, toks)
	require.InDelta(t, math.Log(.5), float64(sum), 1e-6)
}

// beamLogProbs is a row of log-probabilities of a, b, c, d and EOT (tokens
// 1-5; token 0 unused) for the beam search tests.
func beamLogProbs(pa, pb, pc, pd, pe float64) []float32 {
	inf := float32(math.Inf(-1))
	row := []float32{inf, inf, inf, inf, inf, inf}
	for i, v := range []float64{pa, pb, pc, pd, pe} {
		if v > 0 {
			row[i+1] = float32(math.Log(v))
		}
	}
	return row
}
