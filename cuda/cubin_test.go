package cuda

import (
	"bytes"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
	"github.com/ulikunitz/xz"
)

// cubinIn serves a module's cubin for the architectures it was made for,
// only while SOURCE holds the hash of the embedded PTX, and never for
// another module or a newer GPU; "none" serves nothing.
func TestCubinIn(t *testing.T) {
	image := []byte("\x7fELF stands in for ptxas output")
	var z bytes.Buffer
	w, err := xz.NewWriter(&z)
	require.NoError(t, err)
	_, err = w.Write(image)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	fsys := func(source string) fstest.MapFS {
		return fstest.MapFS{
			"SOURCE":                 {Data: []byte(source)},
			"kernels.sm_90.cubin.xz": {Data: z.Bytes()},
			"sm90a.sm_90a.cubin.xz":  {Data: z.Bytes()},
			"kernels.sm_80.cubin.xz": {Data: []byte("not xz")},
		}
	}
	ok := fsys("kernels " + moduleHash("kernels") + "\nsm90a " + moduleHash("sm90a") + "\n")
	require.Equal(t, image, cubinIn(ok, "kernels", 90))
	require.Equal(t, image, cubinIn(ok, "sm90a", 90), "the sm90a module's cubin is sm_90a")
	require.Nil(t, cubinIn(ok, "kernels", 86), "no file")
	require.Nil(t, cubinIn(ok, "kernels", 80), "not xz")
	require.Nil(t, cubinIn(ok, "sm80", 90), "not in SOURCE")
	require.Nil(t, cubinIn(fsys("kernels "+moduleHash("sm80")+"\n"), "kernels", 90), "made from other PTX")
	require.Nil(t, cubinIn(fsys("none\n"), "kernels", 90))
	_, err = cubinSources(fsys("kernels\tabc extra\n"))
	require.Error(t, err)
}
