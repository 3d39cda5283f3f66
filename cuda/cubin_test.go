package cuda

import (
	"bytes"
	"os"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
	"github.com/ulikunitz/xz"
)

// xzOf is b compressed as a cubin file is.
func xzOf(t *testing.T, b []byte) *bytes.Buffer {
	var z bytes.Buffer
	w, err := xz.NewWriter(&z)
	require.NoError(t, err)
	_, err = w.Write(b)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return &z
}

// cubinIn serves a module's cubin for the architectures it was made for,
// only while SOURCE holds the hash of the embedded PTX, and never for
// another module or a newer GPU; "none" serves nothing.
func TestCubinIn(t *testing.T) {
	image := []byte("\x7fELF stands in for ptxas output")
	z := xzOf(t, image)
	fsys := func(source string) fstest.MapFS {
		return fstest.MapFS{
			"SOURCE":                 {Data: []byte(source)},
			"kernels.sm_90.cubin.xz": {Data: z.Bytes()},
			"sm90a.sm_90a.cubin.xz":  {Data: z.Bytes()},
			"kernels.sm_80.cubin.xz": {Data: []byte("not xz")},
		}
	}
	img := func(fsys fstest.MapFS, module string, cc int) []byte { b, _ := cubinIn(fsys, module, cc); return b }
	ok := fsys("kernels " + moduleHash("kernels") + "\nsm90a " + moduleHash("sm90a") + "\n")
	require.Equal(t, image, img(ok, "kernels", 90))
	require.Equal(t, image, img(ok, "sm90a", 90), "the sm90a module's cubin is sm_90a")
	require.Nil(t, img(ok, "kernels", 86), "no file")
	require.Nil(t, img(ok, "kernels", 80), "not xz")
	require.Nil(t, img(ok, "sm80", 90), "not in SOURCE")
	require.Nil(t, img(fsys("kernels "+moduleHash("sm80")+"\n"), "kernels", 90), "made from other PTX")
	require.Nil(t, img(fsys("none\n"), "kernels", 90))
	// "pdl" after the hash: the cubins for 9.0 and newer were made from
	// the PDL form of the PTX; without it their kernels are launched plainly
	_, pdl := cubinIn(ok, "kernels", 90)
	require.False(t, pdl)
	withPDL := fsys("kernels " + moduleHash("kernels") + " pdl\n")
	b, pdl := cubinIn(withPDL, "kernels", 90)
	require.Equal(t, image, b)
	require.True(t, pdl)
	_, err := cubinSources(fsys("kernels abc pdl2\n"))
	require.Error(t, err)
	_, err = cubinSources(fsys("kernels\tabc extra\n"))
	require.Error(t, err)
}

// A cubin inflated once is read back from the cache by the next process
// (here: the next read), a damaged cache file is inflated again and
// rewritten, and "off" leaves the cache alone.
func TestCubinCache(t *testing.T) {
	image := bytes.Repeat([]byte("\x7fELF cached image "), 1000)
	z := xzOf(t, image)
	fsys := fstest.MapFS{"kernels.sm_90.cubin.xz": {Data: z.Bytes()}}
	read := func() ([]byte, int64) {
		before := inflations.Load()
		b, err := readCubin(fsys, "kernels.sm_90.cubin.xz")
		require.NoError(t, err)
		return b, inflations.Load() - before
	}

	t.Setenv("HARK_CUDA_CUBIN_CACHE", "off")
	b, n := read()
	require.Equal(t, image, b)
	require.EqualValues(t, 1, n)

	dir := t.TempDir()
	t.Setenv("HARK_CUDA_CUBIN_CACHE", dir)
	b, n = read()
	require.Equal(t, image, b)
	require.EqualValues(t, 1, n, "first read inflates")
	b, n = read()
	require.Equal(t, image, b)
	require.EqualValues(t, 0, n, "second read comes from the cache")

	p := cubinCachePath(z.Bytes())
	require.FileExists(t, p)
	f, err := os.ReadFile(p)
	require.NoError(t, err)
	f[10] ^= 1 // one flipped bit: the trailer no longer matches
	require.NoError(t, os.WriteFile(p, f, 0o644))
	b, n = read()
	require.Equal(t, image, b)
	require.EqualValues(t, 1, n, "a damaged cache file is inflated again")
	b, n = read()
	require.Equal(t, image, b)
	require.EqualValues(t, 0, n, "and rewritten")

	require.NoError(t, os.WriteFile(p, f[:20], 0o644)) // short
	b, n = read()
	require.Equal(t, image, b)
	require.EqualValues(t, 1, n)
}
