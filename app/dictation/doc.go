// Package dictation is dictation's capture side: an input device armed
// with a pre-roll ring (so the first word is never cut off), and every
// recording written to disk as it is captured (audio.WAVWriter, valid
// after a crash). The rest of a dictation (history row, transcription,
// clean-up, output) is app.Dictation's, over app.CaptureRecorder.
package dictation
