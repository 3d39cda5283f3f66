package plan

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStackedWeights: a weights buffer stacked from parts (Weights.Stack)
// is declared once with the parts' summed size, reads back as the parts
// end to end, digests as a Data buffer of that size would, and CheckLoad
// rejects parts that are short, parts beside Data, or parts on another
// kind of buffer.
func TestStackedWeights(t *testing.T) {
	var p Plan
	w := NewWeights(&p)
	parts := [][]byte{{1, 2, 3}, {4}, {5, 6}}
	a := w.Stack("qkv", parts...)
	require.Equal(t, a, w.Stack("qkv", parts...), "declared once")
	require.Len(t, p.Buffers, 1)
	b := p.Buffers[0]
	require.Equal(t, int64(6), b.Size)
	require.Equal(t, int64(6), b.WeightsLen())
	require.Equal(t, []byte{1, 2, 3, 4, 5, 6}, b.WeightBytes())
	dst := make([]byte, 8)
	b.CopyWeights(dst)
	require.Equal(t, []byte{1, 2, 3, 4, 5, 6, 0, 0}, dst)
	require.NoError(t, CheckLoad(&p))

	var q Plan
	NewWeights(&q).Bind("qkv", []byte{1, 2, 3, 4, 5, 6})
	require.Equal(t, q.Digest(), p.Digest(), "the digest sees the size, not where the bytes lie")

	// A smaller Size takes the first bytes only.
	p.Buffers[0].Size = 4
	require.Equal(t, []byte{1, 2, 3, 4}, p.Buffers[0].WeightBytes())

	for name, c := range map[string]struct {
		b   Buffer
		err string
	}{
		"short":     {Buffer{Name: "s", Kind: BufWeights, Size: 7, Parts: parts}, "has 6 bytes of data, declared 7"},
		"both":      {Buffer{Name: "s", Kind: BufWeights, Size: 6, Parts: parts, Data: make([]byte, 6)}, "both Data and Parts"},
		"not-parts": {Buffer{Name: "s", Kind: Scratch, Size: 6, Parts: parts}, "not a weights buffer but has Data"},
		"not-data":  {Buffer{Name: "s", Kind: State, Size: 6, Data: make([]byte, 6)}, "not a weights buffer but has Data"},
	} {
		t.Run(name, func(t *testing.T) {
			require.ErrorContains(t, CheckLoad(&Plan{Name: "x", Buffers: []Buffer{c.b}}), c.err)
		})
	}
}
