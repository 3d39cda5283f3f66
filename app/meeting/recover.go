package meeting

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/harkapp/hark/audio"
)

// Unfinished lists the meetings a process that died left recording, or
// that wait (interrupted) to be resumed or finished, newest first. Call
// it with the data folder's lock held and before starting a meeting: no
// live recorder then exists.
func Unfinished(root string) ([]Meta, error) {
	all, err := List(root)
	if err != nil {
		return nil, err
	}
	var out []Meta
	for _, m := range all {
		if m.State == StateRecording || m.State == StateInterrupted {
			out = append(out, m)
		}
	}
	return out, nil
}

// ErrFinished is returned for a meeting that is finished already.
var ErrFinished = errors.New("the meeting is finished already")

// readUnfinished reads the meeting id's meta.json and refuses a finished
// one.
func readUnfinished(root, id string) (Meta, error) {
	m, err := Read(root, id)
	if err != nil {
		return Meta{}, err
	}
	if m.State == StateFinished {
		return m, fmt.Errorf("meeting %s: %w", id, ErrFinished)
	}
	return m, nil
}

// Interrupt makes a meeting a dead process left recording whole, without
// finishing it: its audio file's header is set from what reached the disk
// (everything the dead process wrote is kept), and it is marked
// interrupted, cut short at its file's last write. An interrupted meeting
// is left as it is.
func Interrupt(root, id string) (Meta, error) {
	m, err := readUnfinished(root, id)
	if err != nil || m.State == StateInterrupted {
		return m, err
	}
	path := filepath.Join(Dir(root, id), AudioName)
	if st, err := os.Stat(path); err == nil {
		m.CutAt = st.ModTime() // before the repair writes to it
	} else {
		m.CutAt = m.Started
	}
	frames, err := audio.RepairWAV(path)
	if err != nil && !os.IsNotExist(err) {
		return Meta{}, fmt.Errorf("meeting: recovering %s: %w", id, err)
	}
	m.State = StateInterrupted
	m.Duration = float64(frames) / float64(max(m.Rate, 1))
	return m, writeMeta(Dir(root, id), m)
}

// Finish finishes a meeting a crash cut short (left recording, or
// interrupted): it is made whole as Interrupt does and marked finished
// and recovered. A finished meeting is ErrFinished.
func Finish(root, id string) (Meta, error) {
	m, err := Interrupt(root, id)
	if err != nil {
		return m, err
	}
	m.State, m.Recovered = StateFinished, true
	return m, writeMeta(Dir(root, id), m)
}
