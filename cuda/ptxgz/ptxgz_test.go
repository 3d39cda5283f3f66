package ptxgz

import (
	"bytes"
	"compress/gzip"
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
	_, err := Decode([]byte("not gzip"))
	require.Error(t, err)
	gz, err := Encode([]byte("abc"))
	require.NoError(t, err)
	_, err = Decode(gz[:len(gz)-4]) // cut: checksum and size missing
	require.Error(t, err)
}

func TestDecodeBoundsTheSize(t *testing.T) {
	var b bytes.Buffer
	w, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed)
	zero := make([]byte, 1<<20)
	for i := 0; i <= maxPTX>>20; i++ {
		_, _ = w.Write(zero)
	}
	require.NoError(t, w.Close())
	_, err := Decode(b.Bytes())
	require.ErrorContains(t, err, "over")
}
