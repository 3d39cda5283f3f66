package app

import (
	"errors"

	"github.com/harkapp/hark/app/trigger"
)

// Trigger performs an action of the trigger machine (app/trigger):
// start, stop (transcribing in the background, as Toggle does) or cancel.
func (d *Dictation) Trigger(a trigger.Action) error {
	switch a {
	case trigger.Start:
		return d.Start()
	case trigger.Stop:
		if !d.Recording() {
			return nil // stopped meanwhile (the window, auto-stop)
		}
		go d.stopQuietly()
		return nil
	case trigger.Cancel:
		return d.Discard()
	}
	return nil
}

// Recording reports whether a recording runs now.
func (d *Dictation) Recording() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.st.State == DictRecording
}

// Discard ends a recording without transcribing it and deletes its
// history row and audio: the trigger key turned out to be held as a
// modifier (Right Option+E), so nothing was said for Hark. Without a
// recording it does nothing. (The user's Cancel, app/cancel.go, keeps the
// recording in History.)
func (d *Dictation) Discard() error {
	id, _, err := d.abortRecording()
	if errors.Is(err, errNotRecording) || errors.Is(err, errStarting) {
		return nil
	}
	derr := d.deps.history.Delete(id)
	d.setState(func(s *DictationStatus) { s.State, s.StartedAt, s.ItemID, s.Error = DictIdle, 0, 0, "" })
	if err != nil {
		return err
	}
	return derr
}
