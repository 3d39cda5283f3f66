package shared

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWER(t *testing.T) {
	require.Zero(t, WER("Ask not, what.", "ask NOT what"))
	require.InDelta(t, 0.25, WER("a b c d", "a x c d"), 1e-12)
	require.InDelta(t, 0.5, WER("a b c d", "a b"), 1e-12)
	require.InDelta(t, 0.5, WER("a b", "a b c"), 1e-12)
	require.Equal(t, 2.0, WER("", "x y"), "an empty reference counts as one word")
}

// The rolling row and the alignment's table agree on every pair of
// prefixes of a few word lists.
func TestDistanceMatchesTable(t *testing.T) {
	lists := [][]string{nil, {"a"}, {"a", "b", "c", "d"}, {"a", "x", "c", "d", "e"}, {"b", "a", "b", "a"}, {"x", "y"}}
	for _, ref := range lists {
		for _, hyp := range lists {
			require.Equal(t, editDistance(ref, hyp)[len(ref)][len(hyp)], distance(ref, hyp), "%q %q", ref, hyp)
		}
	}
}

// Each hyp word gets the ref word it matches; inserted and substituted
// words get -1.
func TestAlignWords(t *testing.T) {
	require.Equal(t, []int{0, -1, 2, 3}, AlignWords([]string{"a", "b", "c", "d"}, []string{"a", "x", "c", "d"}))
	require.Equal(t, []int{0, -1, 1}, AlignWords([]string{"a", "b"}, []string{"a", "y", "b"}))
	require.Equal(t, []int{1}, AlignWords([]string{"a", "b", "c"}, []string{"b"}))
	require.Empty(t, AlignWords([]string{"a"}, nil))
}
