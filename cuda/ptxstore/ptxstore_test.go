package ptxstore

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRoundTripAndStable(t *testing.T) {
	ptx := bytes.Repeat([]byte(".visible .entry k(\n\tret;\n}\n"), 1000)
	a, err := Encode(ptx)
	require.NoError(t, err)
	b, err := Encode(ptx)
	require.NoError(t, err)
	require.Equal(t, a, b, "the same PTX must give the same stored bytes")
	require.Less(t, len(a), len(ptx)/10)
	got, err := Decode(a)
	require.NoError(t, err)
	require.Equal(t, ptx, got)

	p := filepath.Join(t.TempDir(), "m"+Ext)
	require.NoError(t, Write(p, ptx))
	got, err = Read(p)
	require.NoError(t, err)
	require.Equal(t, ptx, got)
}

func TestDecodeRefusesBadData(t *testing.T) {
	_, err := Decode([]byte("not xz"))
	require.Error(t, err)
	stored, err := Encode(bytes.Repeat([]byte("abc\n"), 100))
	require.NoError(t, err)
	_, err = Decode(stored[:len(stored)-8]) // cut: index and footer missing
	require.Error(t, err)
	bad := bytes.Clone(stored)
	bad[len(bad)/2] ^= 0x40 // a flipped bit in the compressed data or its check
	_, err = Decode(bad)
	require.Error(t, err)
	empty, err := Encode(nil)
	require.NoError(t, err)
	_, err = Decode(empty)
	require.ErrorContains(t, err, "empty")
}

func TestDecodeBoundsTheSize(t *testing.T) {
	ptx := bytes.Repeat([]byte("x"), 1<<16)
	stored, err := Encode(ptx)
	require.NoError(t, err)
	_, err = decode(stored, len(ptx)-1)
	require.ErrorContains(t, err, "over")
	got, err := decode(stored, len(ptx))
	require.NoError(t, err)
	require.Len(t, got, len(ptx))
}
