package ggml

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestF32Bytes(t *testing.T) {
	v := []float32{1, -2.5, float32(math.Inf(1)), 0}
	b := F32Bytes(v)
	require.Equal(t, []byte{0, 0, 0x80, 0x3f}, b[:4], "little-endian")
	require.Equal(t, v, BytesF32(b))
	require.Equal(t, v[:1], BytesF32(b[:7]), "a partial value is ignored")
	require.Empty(t, F32Bytes(nil))
}
