//go:build desktop

package frontend

import (
	"embed"
	"io/fs"
)

// Desktop builds (`wails build` sets the tag after building the UI) carry
// the UI; a plain `go build` does not need frontend/dist to exist.
//
//go:embed all:dist
var dist embed.FS

var embedded = func() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // "dist" is a literal embedded above
	}
	return sub
}()
