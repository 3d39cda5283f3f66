package app

import (
	"errors"
	"os"
	"syscall"
)

// A dictation whose WAV can't be written (a full disk) goes on from the
// samples in memory: the user is told at once, the text is delivered, and
// the history item says the audio was not kept.

// saveReason says why, without the file's path.
func saveReason(err error) string {
	if errors.Is(err, syscall.ENOSPC) {
		return "disk full"
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// saveErrorMessage is what the user reads.
func saveErrorMessage(err error) string {
	return "recording not saved: " + saveReason(err) + " (the dictation goes on from memory)"
}

// saveFailed runs when the recording's file stops being written.
func (d *Dictation) saveFailed(err error) {
	msg := saveErrorMessage(err)
	d.setState(func(s *DictationStatus) { s.Error = msg })
	d.a.emit.Emit("dictation:warning", map[string]string{"message": msg})
}

// noteAudioNotKept marks a dictation whose audio file is incomplete.
func (h *History) noteAudioNotKept(it Item, err error) Item {
	it.Error = "audio not kept: " + saveReason(err) + "; the text was transcribed from memory"
	if serr := h.save(it); serr != nil {
		return it
	}
	if fresh, gerr := h.Get(it.ID); gerr == nil {
		return fresh
	}
	return it
}
