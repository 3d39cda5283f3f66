//go:build hark_nocubin

package cuda

import (
	"io/fs"
	"testing/fstest"
)

// embedded is empty in a build without the cubins: every module JIT-
// compiles its PTX unless $HARK_CUDA_CUBIN_DIR names a cubin folder.
var embedded fs.FS = fstest.MapFS{"SOURCE": {Data: []byte("none\n")}}
