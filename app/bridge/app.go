package bridge

import (
	"fmt"
	"path/filepath"

	"github.com/harkapp/hark/app"
)

// Recordings maps a history id to the audio it replays: the recording
// Hark made, else the user's file that was transcribed.
func Recordings(h *app.History) func(id int64) (string, error) {
	return func(id int64) (string, error) {
		it, err := h.Get(id)
		if err != nil {
			return "", err
		}
		if it.AudioPath != "" {
			return it.AudioPath, nil
		}
		if it.SourcePath != "" {
			return it.SourcePath, nil
		}
		return "", fmt.Errorf("item %d has no audio", id)
	}
}

// Attach registers a's services and serves its recordings, with uploads
// stored under the data folder. The bridge is created first because the
// services need it as their Emitter.
func (b *Bridge) Attach(a *app.App) error {
	b.mu.Lock()
	b.opts.UploadDir = filepath.Join(a.DataDir(), "uploads")
	b.opts.Recording = Recordings(a.History)
	b.mu.Unlock()
	return b.Register(a.Services()...)
}
