package app

import "errors"

// Cancel ends the recording without transcribing or inserting anything:
// a false start. The recording stays in History (recorded, not
// transcribed), where it can still be transcribed or deleted.
func (d *Dictation) Cancel() error {
	d.mu.Lock()
	rec, id := d.rec, d.cur
	if d.st.State != DictRecording || id == 0 {
		d.mu.Unlock()
		return errors.New("dictation is not recording")
	}
	d.cur, d.plan = 0, nil
	d.st.State = DictTranscribing // holds off a Start until the recorder is free
	d.mu.Unlock()
	// Stop's error says why the samples can't be transcribed ("no speech
	// was heard"): beside the point, nothing is transcribed.
	r, _ := rec.Stop()
	if s, ok := rec.(streamedRecorder); ok {
		s.Streamed() // forgotten: the stream's text belongs to no one
	}
	_, herr := d.deps.history.FinishRecording(id, r.DurationMs)
	if r.SaveErr != nil {
		if cur, gerr := d.deps.history.Get(id); gerr == nil {
			d.deps.keepUnsaved(id, cur.AudioPath, r.Samples) // app/savefail.go
		}
	}
	d.setState(func(s *DictationStatus) { s.State, s.StartedAt, s.Error = DictIdle, 0, "" })
	d.deps.emit.Emit(EventDictationCanceled, map[string]int64{"itemId": id})
	return herr
}
