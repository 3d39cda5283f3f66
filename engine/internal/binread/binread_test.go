package binread

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReader(t *testing.T) {
	d := &Reader{B: []byte{1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 0, 0, 0, 9}}
	u, err := d.U32("a")
	require.NoError(t, err)
	require.Equal(t, uint32(1), u)
	i, err := d.I32("b")
	require.NoError(t, err)
	require.Equal(t, int32(-1), i)
	v, err := d.U64("c")
	require.NoError(t, err)
	require.Equal(t, uint64(2), v)
	require.Equal(t, 1, d.Remaining())
	_, err = d.U32("the vocabulary size")
	require.EqualError(t, err, "truncated file: the vocabulary size needs 4 bytes at offset 16, 1 left")
	_, err = d.Take(-1, "x")
	require.Error(t, err)
	b, err := d.Take(1, "last")
	require.NoError(t, err)
	require.Equal(t, []byte{9}, b)
}
