package whisper

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

// A batched beam step gives each beam the logits of its own sequence
// decoded alone, also after the caches were shared out from one prompt
// and re-selected (a permutation with repeats).
func TestBeamStepMatchesSingleSequences(t *testing.T) {
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
	require.NoError(t, m.reorderKV(src, len(prompt)+1))
	got, err = m.StepBeams(second, len(prompt)+1)
	require.NoError(t, err)
	for b := range 5 {
		requireClose(t, want2[b], got[b*nv:(b+1)*nv], 1e-4, "after re-selection")
	}

	_, err = m.StepBeams(first[:3], 0)
	require.Error(t, err)
	require.Error(t, m.reorderKV([]int{0, 7}, 1))
}

func TestTopK(t *testing.T) {
	x := []float32{1, 5, 3, 5, -1, 9, 3}
	require.Equal(t, []int32{5, 1, 3, 2}, topK(x, 4))
	require.Equal(t, []int32{5}, topK(x, 1))
}

func TestRankSequences(t *testing.T) {
	// -6/3 = -2 beats -3/1; the first of equal scores wins.
	require.Equal(t, 1, rankSequences([]finishedSeq{{tokens: []int32{1}, score: -3}, {tokens: []int32{1, 2, 3}, score: -6},
		{tokens: []int32{4, 5, 6}, score: -6}}))
}
