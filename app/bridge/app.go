package bridge

import (
	"github.com/harkapp/hark/app"
	"github.com/harkapp/hark/internal/usererr"
)

// Attach registers a's services and serves its recordings, with uploads
// kept by the app under its data folder. The bridge is created first because the
// services need it as their Emitter.
func (b *Bridge) Attach(a *app.App) error {
	b.mu.Lock()
	b.opts.SaveUpload = a.Files.SaveUpload
	b.opts.Recording = a.History.AudioFile
	b.opts.Folders = []usererr.Folder{{Path: a.DataDir(), Name: "the data folder"}, {Path: a.ModelsDir(), Name: "the models folder"}}
	b.mu.Unlock()
	return b.Register(a.Services()...)
}
