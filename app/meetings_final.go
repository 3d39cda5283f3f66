package app

import (
	"context"
	"errors"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/harkapp/hark/app/meeting"
	"github.com/harkapp/hark/engine/runtime"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/channels"
)

// A meeting's final pass: after stop (or a crash), both channels of the
// recording are transcribed again offline, with the speech model held at
// Batch priority and yielded before every window, so a dictation (and the
// API) goes first; its notes then replace the live transcript's.

// notesFiles are the notes written in a meeting's folder, by format.
var notesFiles = map[string]string{"notes.md": meeting.FormatMarkdown, "transcript.json": whisper.FormatJSON}

// transcriptName is the notes in JSON, read back for export.
const transcriptName = "transcript.json"

// writeMeetingNotes writes the notes files in dir.
func writeMeetingNotes(dir string, n meeting.Notes) error {
	var err error
	for name, format := range notesFiles {
		err = errors.Join(err, writeNotes(filepath.Join(dir, name), n, format))
	}
	return err
}

// readMeetingNotes reads the notes a meeting's folder holds.
func readMeetingNotes(dir string) (meeting.Notes, error) {
	f, err := os.Open(filepath.Join(dir, transcriptName))
	if err != nil {
		return meeting.Notes{}, err
	}
	defer f.Close()
	return meeting.ReadNotes(f)
}

// Export renders the notes of the meeting History entry item in format:
// "md" (Markdown notes with speakers, times and markers), "srt", "vtt",
// "txt" or "json" (meeting.Formats).
func (m *Meetings) Export(item int64, format string) (string, error) {
	if !slices.Contains(meeting.Formats, format) {
		return "", fmt.Errorf("unknown notes format %q (%s)", format, strings.Join(meeting.Formats, ", "))
	}
	it, err := m.deps.history.Get(item)
	if err != nil {
		return "", err
	}
	dir, err := m.deps.history.meetingDir(it)
	if err != nil {
		return "", err
	}
	n, err := readMeetingNotes(dir)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := n.Write(&b, format); err != nil {
		return "", err
	}
	return b.String(), nil
}

func meetingTitle(meta meeting.Meta) string {
	return "Meeting " + meta.Started.Format("2 January 2006, 15:04")
}

// pass is a final pass running.
type pass struct {
	cancel context.CancelFunc
	done   chan struct{}
	// frac is how far it has got (float64 bits): atomic, as the pass
	// sets it holding the speech model, and must not wait for Meetings.mu
	// then (Stop holds it while the live transcriber waits for the model).
	frac atomic.Uint64
}

func (p *pass) progress() float64 { return math.Float64frombits(p.frac.Load()) }

// PassProgress is the payload of EventMeetingProgress: the final pass of
// the meeting History entry Item has transcribed the fraction Done of the
// speech its recording let through.
type PassProgress struct {
	Item int64   `json:"item"`
	Done float64 `json:"done"`
}

// startPass starts the final pass of the meeting entry id. Called with
// m.mu held: Close waits for the passes only after taking it
// (Meetings.close), so the Add below never races its Wait.
func (m *Meetings) startPass(id int64) {
	life := m.deps.life
	if life.closed() {
		return // the entry stays "transcribing": the next start resumes it
	}
	ctx, cancel := context.WithCancel(life.ctx)
	p := &pass{cancel: cancel, done: make(chan struct{})}
	m.passes[id] = p
	life.wg.Add(1)
	go func() {
		defer life.wg.Done()
		defer func() {
			cancel()
			m.mu.Lock()
			delete(m.passes, id)
			m.emitStatus()
			m.mu.Unlock()
			close(p.done)
		}()
		m.runPass(ctx, id, func(done float64) {
			p.frac.Store(math.Float64bits(done))
			m.deps.emit.Emit(EventMeetingProgress, PassProgress{Item: id, Done: done})
		})
	}()
}

// cancelPass cancels the final pass of id and waits for it to end (the
// entry is being deleted).
func (m *Meetings) cancelPass(id int64) {
	m.mu.Lock()
	p := m.passes[id]
	m.mu.Unlock()
	if p != nil {
		p.cancel()
		<-p.done
	}
}

// finishAgain runs the final pass of the meeting entry id again (History's
// Retranscribe).
func (m *Meetings) finishAgain(id int64) error {
	if m.deps.closed() {
		return errClosed
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.passes[id] != nil {
		return fmt.Errorf("item %d: the meeting's final pass is already running", id)
	}
	if m.summaries[id] {
		return fmt.Errorf("item %d: the meeting is being summarized; transcribe it again when that is done", id)
	}
	it, err := m.deps.history.Get(id)
	if err != nil {
		return err
	}
	it.Status, it.Error = StatusTranscribing, ""
	if err := m.deps.history.updateMeeting(it); err != nil {
		return err
	}
	m.startPass(id)
	return nil
}

// runPass transcribes the meeting entry id's recording channel by channel
// and replaces its notes, telling progress how far it has got. On failure
// the entry keeps the live transcript and says why.
func (m *Meetings) runPass(ctx context.Context, id int64, progress func(done float64)) {
	h := m.deps.history
	it, err := h.Get(id)
	if err != nil {
		log.Printf("hark: a meeting's final pass: %v", err)
		return
	}
	notes, model, err := m.transcribeMeeting(ctx, it, progress)
	if ctx.Err() != nil {
		return // deleted, or the app is closing (it resumes at the next start)
	}
	if err == nil {
		var dir string
		if dir, err = h.meetingDir(it); err == nil {
			err = writeMeetingNotes(dir, notes)
		}
	}
	if err != nil {
		it.Status, it.Error = StatusDone, "final pass: "+err.Error()
		if it.Text == "" {
			it.Status = StatusFailed
		}
		log.Printf("hark: the final pass of meeting item %d: %v", id, err)
	} else {
		it.setNotes(notes)
		it.Status, it.Error, it.Model = StatusDone, "", model
		m.mu.Lock()
		if m.lastItem == id {
			m.last = notes // the view shows the final text
		}
		m.mu.Unlock()
	}
	if err := h.updateMeeting(it); err != nil {
		log.Printf("hark: saving meeting item %d: %v", id, err)
	}
}

// transcribeMeeting is the final pass proper (channels.TranscribeRecording):
// each channel of the recording, gated, transcribed as a file (30-s windows, the log-mel
// spooled to disk so hours of audio keep memory flat) with word times, at Batch
// priority, the model yielded before each channel and window; the words
// are merged by time with their speakers.
func (m *Meetings) transcribeMeeting(ctx context.Context, it Item, progress func(done float64)) (meeting.Notes, string, error) {
	dir, err := m.deps.history.meetingDir(it)
	if err != nil {
		return meeting.Notes{}, "", err
	}
	meta, err := meeting.Read(m.deps.root, filepath.Base(dir))
	if err != nil {
		return meeting.Notes{}, "", err
	}
	path, name, err := m.deps.models.resolveSpeech("")
	if err != nil {
		return meeting.Notes{}, "", err
	}
	set, err := m.deps.settings.Get()
	if err != nil {
		return meeting.Notes{}, "", err
	}
	plan, err := planFor(set, "", false)
	if err != nil {
		return meeting.Notes{}, "", err
	}
	sm, err := m.deps.speech(ctx, path, runtime.Batch)
	if err != nil {
		return meeting.Notes{}, "", err
	}
	defer sm.Release()
	before := func(ctx context.Context) error {
		if m.passWindow != nil {
			m.passWindow()
		}
		return sm.Yield(ctx) // a dictation goes first
	}
	opt := whisper.DefaultTranscribeOptions()
	opt.BeamSize, opt.WordTimestamps, opt.BeforeWindow = speechBeams, true, before
	plan.steer(&opt, sm.File)
	ts, err := channels.TranscribeRecording(ctx, sm.File, sm.Model, filepath.Join(dir, meeting.AudioName),
		channels.RecordingOptions{Transcribe: opt, Before: before, OnProgress: progress})
	if err != nil {
		return meeting.Notes{}, "", err
	}
	return meeting.Notes{Title: it.Title, Started: meta.Started, Lines: meeting.Lines(channels.Words(ts)),
		Markers: meta.Markers, Final: true}, name, nil
}

// adopt runs at start: every finished meeting on disk gets its History
// entry (one without notes gets its final pass), one a crash cut short is
// made whole and offered (Resume, Finish), and the final passes a quit or
// a crash interrupted run again.
func (m *Meetings) adopt() {
	h := m.deps.history
	rows, err := h.deps.db.AllItems()
	if err != nil {
		log.Printf("hark: listing the history for meetings: %v", err)
		return
	}
	known := map[string]bool{}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range rows {
		if r.Kind != KindMeeting {
			continue
		}
		known[r.AudioPath] = true
		if r.Status == StatusRecorded || r.Status == StatusDone && r.Error == "interrupted" {
			m.startPass(r.ID)
		}
	}
	metas, err := meeting.List(m.deps.root)
	if err != nil {
		log.Printf("hark: listing the meetings: %v", err)
		return
	}
	for _, meta := range metas {
		dir := meeting.Dir(m.deps.root, meta.ID)
		if known[filepath.Join(dir, meeting.AudioName)] {
			continue
		}
		if meta.State != meeting.StateFinished {
			// Cut short by a crash: made whole, and offered to the user.
			cut, err := meeting.Interrupt(m.deps.root, meta.ID)
			if err != nil {
				log.Printf("hark: recovering the meeting %s: %v", meta.ID, err)
				continue
			}
			m.offers = append(m.offers, offerOf(cut))
			continue
		}
		notes, err := readMeetingNotes(dir)
		status := StatusDone
		if err != nil {
			notes, status = meeting.Notes{Title: meetingTitle(meta), Started: meta.Started, Markers: meta.Markers}, StatusRecorded
		}
		it, err := h.addMeeting(meetingItem(dir, meta, notes, status))
		if err != nil {
			log.Printf("hark: adding the meeting %s to the history: %v", meta.ID, err)
			continue
		}
		if status == StatusRecorded {
			m.startPass(it.ID)
		}
	}
}
