package app

import (
	"sync"

	"github.com/harkapp/hark/app/meeting"
	"github.com/harkapp/hark/internal/channels"
)

// The Meeting view's live transcript: the words the live transcriber
// commits become speaker lines (meeting.Lines, as the notes have them),
// and each change goes to the view as the lines from the first one that
// changed (EventMeetingLines), so an hours-long meeting never resends its
// whole transcript.

// MeetingLines is the payload of EventMeetingLines: the recording
// meeting's lines from index From on replace the view's. Heard is how far
// into the meeting the live transcription has got (seconds): behind the
// recording when the machine is busy, and the view says so. An event
// that only moves Heard on has no lines and From at their end.
type MeetingLines struct {
	ID    string         `json:"id"`
	From  int            `json:"from"`
	Lines []meeting.Line `json:"lines"`
	Heard float64        `json:"heard"`
}

// liveLines holds a recording meeting's transcript so far. Its own lock,
// not Meetings.mu: the transcriber calls add while Stop, holding
// Meetings.mu, waits for the transcriber to end.
type liveLines struct {
	id   string
	emit Emitter

	mu    sync.Mutex
	words []channels.Word
	lines []meeting.Line
	heard float64
}

// add takes newly committed words and tells the view what changed.
func (l *liveLines) add(ws []channels.Word) {
	l.mu.Lock()
	l.words = channels.MergeWords(append(l.words, ws...))
	lines := viewLines(meeting.Lines(l.words))
	from := 0
	for from < len(lines) && from < len(l.lines) && sameLine(lines[from], l.lines[from]) {
		from++
	}
	l.lines = lines
	ev := MeetingLines{ID: l.id, From: from, Lines: append([]meeting.Line{}, lines[from:]...), Heard: l.heard}
	l.mu.Unlock()
	l.emit.Emit(EventMeetingLines, ev)
}

// hear takes how far the live transcription has got and tells the view.
func (l *liveLines) hear(seconds float64) {
	l.mu.Lock()
	l.heard = seconds
	ev := MeetingLines{ID: l.id, From: len(l.lines), Lines: []meeting.Line{}, Heard: seconds}
	l.mu.Unlock()
	l.emit.Emit(EventMeetingLines, ev)
}

// progress returns how far the live transcription has got.
func (l *liveLines) progress() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.heard
}

// get returns the lines so far.
func (l *liveLines) get() []meeting.Line {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]meeting.Line{}, l.lines...)
}

// viewLines drops the lines' words: the view shows the lines, and the
// words would multiply what every event carries.
func viewLines(ls []meeting.Line) []meeting.Line {
	out := make([]meeting.Line, len(ls))
	for i, l := range ls {
		l.Words = nil
		out[i] = l
	}
	return out
}

func sameLine(a, b meeting.Line) bool {
	return a.Speaker == b.Speaker && a.Start == b.Start && a.End == b.End && a.Text == b.Text
}
