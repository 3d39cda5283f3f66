package bridge

import (
	"path/filepath"

	"github.com/harkapp/hark/app"
)

// Attach registers a's services and serves its recordings, with uploads
// stored under the data folder. The bridge is created first because the
// services need it as their Emitter.
func (b *Bridge) Attach(a *app.App) error {
	b.mu.Lock()
	b.opts.UploadDir = filepath.Join(a.DataDir(), "uploads")
	b.opts.Recording = a.History.AudioFile
	b.mu.Unlock()
	return b.Register(a.Services()...)
}
