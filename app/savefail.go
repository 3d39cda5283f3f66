package app

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/harkapp/hark/audio"
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
	d.deps.emit.Emit(EventDictationWarning, Warning{Message: msg})
}

// noteAudioNotKept marks a dictation whose audio file is incomplete.
func (h *History) noteAudioNotKept(it Item, err error) Item {
	it.Error = notKeptPrefix + saveReason(err) + "; the text was transcribed from memory (it is written when space returns)"
	if serr := h.save(it); serr != nil {
		return it
	}
	if fresh, gerr := h.Get(it.ID); gerr == nil {
		return fresh
	}
	return it
}

// notKeptPrefix starts the item error that says the audio is missing.
const notKeptPrefix = "audio not kept: "

// saveRetryEvery is how often a recording that could not be written is
// tried again.
const saveRetryEvery = 30 * time.Second

// maxUnsaved bounds the samples held in memory for recordings waiting for
// disk space (15 minutes at 16 kHz, about 58 MB); beyond it a recording's
// audio is given up and its item says so.
const maxUnsaved = 15 * 60 * audio.WhisperRate

// keepUnsaved holds a dictation's samples whose WAV could not be written
// and writes the file once space returns (tried every saveRetryEvery until
// the app closes), then clears the item's "audio not kept" note.
func (d *Dictation) keepUnsaved(id int64, path string, x []float32) {
	if path == "" || len(x) == 0 || d.unsaved.Add(int64(len(x))) > maxUnsaved {
		d.unsaved.Add(-int64(len(x)))
		return
	}
	every := d.saveRetry
	if every <= 0 {
		every = saveRetryEvery
	}
	d.deps.life.repeat(every, func() bool {
		if d.writeRecording(path, x) != nil {
			return false
		}
		d.unsaved.Add(-int64(len(x)))
		d.deps.history.noteAudioKept(id)
		return true
	})
}

// writeRecording writes x as path's WAV, whole or not at all (a temporary
// file renamed over the incomplete one).
func (d *Dictation) writeRecording(path string, x []float32) error {
	if d.saveWAV != nil {
		return d.saveWAV(path, x)
	}
	tmp := path + ".saving"
	w, err := audio.CreateWAV(tmp, audio.WhisperRate)
	if err != nil {
		return err
	}
	if err := w.Write(x); err != nil {
		w.Close()
		os.Remove(tmp)
		return err
	}
	if err := w.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

// noteAudioKept clears the "audio not kept" note of item id once its
// recording has been written after all.
func (h *History) noteAudioKept(id int64) {
	it, err := h.Get(id)
	if err != nil || !strings.HasPrefix(it.Error, notKeptPrefix) {
		return
	}
	it.Error = ""
	if h.save(it) == nil {
		if fresh, err := h.Get(id); err == nil {
			h.deps.emit.Emit(EventHistoryChanged, fresh)
		}
	}
}
