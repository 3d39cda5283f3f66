// Package frontend holds the built web UI (frontend/dist, made by
// `npm ci && npm run build`) for the Go binary.
package frontend

import (
	"errors"
	"io/fs"
	"os"
)

// ErrNotBuilt says the binary carries no UI and none was found on disk.
var ErrNotBuilt = errors.New(`the UI is not built into this binary: build it with "wails build", or run "npm ci && npm run build" in frontend/ and pass --assets frontend/dist`)

// Assets returns the UI: the embedded copy in desktop builds, else the
// folder dir (a built frontend/dist) when it holds an index.html.
func Assets(dir string) (fs.FS, error) {
	if dir == "" {
		if embedded != nil {
			return embedded, nil
		}
		return nil, ErrNotBuilt
	}
	if _, err := os.Stat(dir + "/index.html"); err != nil {
		return nil, errors.New("no built UI in " + dir + ` (run "npm ci && npm run build" in frontend/)`)
	}
	return os.DirFS(dir), nil
}
