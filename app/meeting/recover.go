package meeting

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/harkapp/hark/audio"
)

// Unfinished lists the meetings left recording by a process that died
// (newest first). Call it with the data folder's lock held and before
// starting a meeting: no live recorder then exists.
func Unfinished(root string) ([]Meta, error) {
	all, err := List(root)
	if err != nil {
		return nil, err
	}
	var out []Meta
	for _, m := range all {
		if m.State == StateRecording {
			out = append(out, m)
		}
	}
	return out, nil
}

// Finish makes an unfinished meeting whole: its audio file's header is
// set from what reached the disk, and it is marked finished and
// recovered. Everything the dead process wrote is kept.
func Finish(root, id string) (Meta, error) {
	dir := Dir(root, id)
	if filepath.Base(dir) != id || id == "" || id == "." || id == ".." {
		return Meta{}, fmt.Errorf("meeting: invalid id %q", id)
	}
	m, err := readMeta(dir)
	if err != nil {
		return Meta{}, err
	}
	if m.State != StateRecording {
		return m, nil
	}
	frames, err := audio.RepairWAV(filepath.Join(dir, AudioName))
	if err != nil && !os.IsNotExist(err) {
		return Meta{}, fmt.Errorf("meeting: recovering %s: %w", id, err)
	}
	m.State, m.Recovered = StateFinished, true
	m.Duration = float64(frames) / float64(max(m.Rate, 1))
	return m, writeMeta(dir, m)
}
