package app

import "errors"

// errNotRecording: Cancel or Discard without a recording.
var errNotRecording = errors.New("dictation is not recording")

// errStarting: Stop, Cancel or Discard while Start is still opening the
// device. The recording is discarded the moment the device opens
// (Dictation.Start): nothing was captured, and the state never says
// "recording" with nothing to stop.
var errStarting = errors.New("the microphone is still opening; the dictation is canceled as soon as it opens")

// aborter is a Recorder that can end a recording for a cancel without the
// work a transcription needs (the live stream's tail decode, the trim).
type aborter interface {
	Abort() (Recording, error)
}

// abortRecording takes the running recording away from the service and
// ends its capture: nothing of it is transcribed. The state stays
// "transcribing" (holding off a Start until the recorder is free) until
// the caller sets it idle. errNotRecording when no recording runs;
// errStarting when Start is still opening the device (the recording is
// then discarded when it opens).
func (d *Dictation) abortRecording() (int64, Recording, error) {
	d.mu.Lock()
	rec, id := d.rec, d.cur
	if d.discardWhileStarting() {
		d.mu.Unlock()
		return 0, Recording{}, errStarting
	}
	if d.st.State != DictRecording || id == 0 || rec == nil {
		d.mu.Unlock()
		return 0, Recording{}, errNotRecording
	}
	d.cur, d.plan = 0, nil
	d.st.State = DictTranscribing // holds off a Start until the recorder is free
	d.mu.Unlock()
	var r Recording
	var err error
	if a, ok := rec.(aborter); ok {
		r, err = a.Abort()
	} else {
		r, err = rec.Stop()
	}
	if s, ok := rec.(streamedRecorder); ok {
		s.Streamed() // forgotten: the stream's text belongs to no one
	}
	return id, r, err
}

// Cancel ends the recording without transcribing or inserting anything:
// a false start. The recording stays in History (recorded, not
// transcribed), where it can still be transcribed or deleted.
func (d *Dictation) Cancel() error {
	// The recorder's error says why the samples can't be transcribed:
	// beside the point, nothing is transcribed.
	id, r, err := d.abortRecording()
	if errors.Is(err, errNotRecording) {
		return err
	}
	if errors.Is(err, errStarting) {
		return nil // canceled when the device opens
	}
	_, herr := d.deps.history.FinishRecording(id, r.DurationMs)
	if r.SaveErr != nil {
		if cur, gerr := d.deps.history.Get(id); gerr == nil {
			d.keepUnsaved(id, cur.AudioPath, r.Samples) // app/savefail.go
		}
	}
	d.setState(func(s *DictationStatus) { s.State, s.StartedAt, s.Error = DictIdle, 0, "" })
	d.deps.emit.Emit(EventDictationCanceled, CanceledItem{ItemID: id})
	return herr
}

// discardWhileStarting asks a Start that is still opening the device to
// discard its recording once it opens, and reports whether one is.
// Called with d.mu held.
func (d *Dictation) discardWhileStarting() bool {
	if d.st.State != DictRecording || d.cur != 0 || d.rec == nil {
		return false
	}
	d.discardOnStart = true
	return true
}
