package plan

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestArgmaxRow(t *testing.T) {
	nan := float32(math.NaN())
	require.Equal(t, 1, ArgmaxRow([]float32{1, 3, 2}))
	require.Equal(t, 1, ArgmaxRow([]float32{1, 3, 3}), "the lowest index on ties")
	require.Equal(t, 2, ArgmaxRow([]float32{nan, 1, 3}), "a NaN never wins, first place included")
	require.Equal(t, 0, ArgmaxRow([]float32{nan, nan}))
	require.Equal(t, 0, ArgmaxRow(nil))
	require.Equal(t, 1, ArgmaxRow([]float32{float32(math.Inf(-1)), -1}))
}
