//go:build !hark_nocubin

package cuda

import (
	"embed"
	"io/fs"
)

//go:embed cubin
var cubins embed.FS

// embedded is the cubin folder built into the binary.
var embedded = func() fs.FS {
	sub, err := fs.Sub(cubins, "cubin")
	if err != nil {
		panic(err) // a constant path of the embed
	}
	return sub
}()
