package app

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/harkapp/hark/app/control"
	"github.com/harkapp/hark/app/meeting"
	am "github.com/harkapp/hark/audio/meeting"
	"github.com/harkapp/hark/engine/runtime"
	"github.com/harkapp/hark/engine/whisper"
)

// Meeting states.
const (
	MeetingIdle      = "idle"
	MeetingRecording = "recording"
)

// MeetingStatus is where meetings stand.
type MeetingStatus struct {
	State   string  `json:"state"`
	ID      string  `json:"id,omitempty"`
	Seconds float64 `json:"seconds"`
	// Heard is how far into the recording meeting its live transcript has
	// got (seconds; MeetingLines events move it on).
	Heard float64 `json:"heard,omitempty"`
	// Notes is the last finished meeting's Markdown notes file.
	Notes string `json:"notes,omitempty"`
	// Item is the last finished meeting's History entry; Finishing: its
	// final pass is running.
	Item      int64 `json:"item,omitempty"`
	Finishing bool  `json:"finishing,omitempty"`
	// Progress is how far that final pass has got: the fraction of the
	// speech let through transcribed (EventMeetingProgress moves it on).
	Progress float64 `json:"progress,omitempty"`
	// Offers are the meetings a crash cut short, made whole at start and
	// waiting for the user to resume or finish them (newest first).
	Offers []MeetingOffer `json:"offers"`
	Error  string         `json:"error,omitempty"`
	// Lines is the transcript by speaker: the recording meeting's live
	// one, else the last finished meeting's notes (Final: from its final
	// pass). Markers are the user's notes on the same timeline.
	Lines   []meeting.Line   `json:"lines"`
	Markers []meeting.Marker `json:"markers"`
	Final   bool             `json:"final,omitempty"`
	// Summary is the last meeting's summary by the chat model (asked for
	// with Summarize); Summarizing: it is being written.
	Summary     string `json:"summary,omitempty"`
	Summarizing bool   `json:"summarizing,omitempty"`
	// Rev orders the statuses: a later one has a larger Rev, also across
	// restarts (it counts on from the start's microsecond). A method's
	// reply and the status events reach the view by different ways (the
	// bridge's HTTP reply and its event stream, or Wails' IPC), so a reply
	// can arrive after an event that followed it; the view keeps the
	// status with the largest Rev.
	Rev int64 `json:"rev"`
}

// MeetingOffer is a meeting a crash cut short: its recording is whole up
// to the crash, and it waits for the user to resume it (Meetings.Resume)
// or finish it (Meetings.Finish), across restarts.
type MeetingOffer struct {
	ID      string    `json:"id"`
	Started time.Time `json:"started"`
	// CutAt is when the crash cut it short; Seconds the audio it holds.
	CutAt   time.Time `json:"cut_at"`
	Seconds float64   `json:"seconds"`
}

func offerOf(meta meeting.Meta) MeetingOffer {
	return MeetingOffer{ID: meta.ID, Started: meta.Started, CutAt: meta.CutAt, Seconds: meta.Duration}
}

// meetingsDeps is what Meetings uses.
type meetingsDeps struct {
	root     string // the meetings folder
	settings *Settings
	models   interface {
		resolveSpeech(arg string) (path, name string, err error)
	}
	speech  func(ctx context.Context, path string, pri runtime.Priority) (*runtime.SpeechModel, error)
	capture am.CaptureConfig // the devices (tests inject theirs)
	closed  func() bool
	emit    Emitter
	life    *lifetime // the final passes run in it
	history *History  // finished meetings become its entries
	// summarizer writes the summaries (the chat model).
	summarizer summarizer
}

// Meetings records meetings (app/meeting): the microphone and the system
// audio to disk as they come, a live transcript by speaker, and the notes
// at stop. The speech model is taken at Interactive priority for each
// live window (runtime.WindowSpeech), so a dictation goes first.
type Meetings struct {
	deps meetingsDeps
	// streamConfig tunes the live transcription (zero: the defaults).
	streamConfig whisper.StreamConfig

	mu        sync.Mutex
	cur       *meeting.Session
	cancel    context.CancelFunc
	live      *liveLines
	lastNotes string
	lastItem  int64
	last      meeting.Notes   // the last finished meeting's notes
	offers    []MeetingOffer  // newest first
	passes    map[int64]*pass // the final passes running, by History entry
	summaries map[int64]bool  // the summaries being written, by History entry
	// summaryTokens and summaryLimit bound a summary (the defaults; tests
	// set their own).
	summaryTokens int
	summaryLimit  time.Duration
	// passWindow, when set, runs before each channel and window of a
	// final pass, the model held (tests order a dictation against it).
	passWindow func()
	rev        int64 // the last status's Rev
}

// newMeetings makes the service and offers the meetings a crash cut
// short: their audio is made whole (nothing that reached the disk is
// lost) and the status lists them until the user resumes or finishes
// them.
func newMeetings(stream whisper.StreamConfig, deps meetingsDeps) *Meetings {
	m := &Meetings{deps: deps, streamConfig: stream, passes: map[int64]*pass{}, summaries: map[int64]bool{},
		summaryTokens: DefaultSummaryTokens, summaryLimit: DefaultSummaryLimit, rev: time.Now().UnixMicro()}
	m.adopt()
	return m
}

// Start starts recording a meeting (one a crash cut short stays offered).
func (m *Meetings) Start() (MeetingStatus, error) {
	if m.deps.closed() {
		return m.Status(), errClosed
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cur != nil {
		return m.status(), errors.New("a meeting is already recording")
	}
	return m.record("")
}

// Resume goes on recording the meeting id that a crash cut short ("":
// the one offered): the same folder and recording, the new audio after
// what was kept (the gap is not recorded), its markers kept; the live
// transcript goes on from there, and at stop the final pass hears all of
// it.
func (m *Meetings) Resume(id string) (MeetingStatus, error) {
	if m.deps.closed() {
		return m.Status(), errClosed
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cur != nil {
		return m.status(), fmt.Errorf("meeting %s is recording: stop it before resuming another", m.cur.Recorder().ID())
	}
	i, err := m.offered(id)
	if err != nil {
		return m.status(), err
	}
	st, err := m.record(m.offers[i].ID)
	if err == nil {
		m.offers = slices.Delete(m.offers, i, i+1)
		st = m.emitStatus()
	}
	return st, err
}

// Finish finishes the meeting id that a crash cut short ("": the one
// offered), with what its recording holds: it becomes a History entry and
// its final pass runs.
func (m *Meetings) Finish(id string) (MeetingStatus, error) {
	if m.deps.closed() {
		return m.Status(), errClosed
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	i, err := m.offered(id)
	if err != nil {
		return m.status(), err
	}
	meta, err := meeting.Finish(m.deps.root, m.offers[i].ID)
	if err != nil {
		return m.status(), err
	}
	m.offers = slices.Delete(m.offers, i, i+1)
	notes := meeting.Notes{Title: meetingTitle(meta), Started: meta.Started, Markers: meta.Markers}
	// No notes are written before the pass: a crash now leaves a finished
	// meeting without notes, which the next start gives its pass.
	err = m.finished(meta, notes, false)
	return m.emitStatus(), err
}

// offered finds the offer id ("": the only one). Called with m.mu held.
func (m *Meetings) offered(id string) (int, error) {
	if id == "" {
		switch len(m.offers) {
		case 0:
			return 0, errors.New("no meeting was cut short")
		case 1:
			return 0, nil
		}
		ids := make([]string, len(m.offers))
		for i, o := range m.offers {
			ids[i] = o.ID
		}
		return 0, fmt.Errorf("%d meetings were cut short (%s): name one", len(ids), strings.Join(ids, ", "))
	}
	if i := slices.IndexFunc(m.offers, func(o MeetingOffer) bool { return o.ID == id }); i >= 0 {
		return i, nil
	}
	if m.cur != nil && m.cur.Recorder().ID() == id {
		return 0, fmt.Errorf("meeting %s is recording", id)
	}
	meta, err := meeting.Read(m.deps.root, id)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return 0, fmt.Errorf("no meeting %s", id)
	case err != nil:
		return 0, err
	case meta.State == meeting.StateFinished:
		return 0, fmt.Errorf("meeting %s: %w", id, meeting.ErrFinished)
	}
	return 0, fmt.Errorf("meeting %s was not cut short", id)
}

// record starts recording a meeting, or resuming the one named. Called
// with m.mu held and no meeting recording.
func (m *Meetings) record(resume string) (MeetingStatus, error) {
	path, _, err := m.deps.models.resolveSpeech("")
	if err != nil {
		return m.status(), err
	}
	set, err := m.deps.settings.Get()
	if err != nil {
		return m.status(), err
	}
	ctx, cancel := context.WithCancel(context.Background())
	// The live transcript takes the model per window (runtime.WindowSpeech),
	// at Interactive priority: a dictation goes first.
	speech := runtime.WindowSpeech{
		Take: func(ctx context.Context) (*runtime.SpeechModel, error) {
			return m.deps.speech(ctx, path, runtime.Interactive)
		},
		Set: func(sm *whisper.StreamModel) {
			if set.Language != "" && set.Language != "auto" {
				sm.Options.Language = set.Language
			}
		},
	}
	lines := &liveLines{id: resume, emit: m.deps.emit}
	live := meeting.NewLive([am.Channels]whisper.WindowTranscriber{speech, speech},
		meeting.LiveConfig{Stream: m.streamConfig, OnWords: lines.add, OnHeard: lines.hear})
	s, err := meeting.StartSession(ctx, meeting.SessionConfig{
		Recorder: meeting.RecorderConfig{Root: m.deps.root, OnSaveError: func(err error) {
			log.Printf("hark: meeting recording: %s", saveErrorMessage(err))
		}},
		Capture: m.deps.capture, Live: live, Resume: resume})
	if err != nil {
		cancel()
		return m.status(), err
	}
	lines.mu.Lock()
	lines.id = s.Recorder().ID()
	lines.mu.Unlock()
	m.cur, m.cancel, m.live = s, cancel, lines
	return m.emitStatus(), nil
}

// Stop ends the meeting: the recording is finished, the live transcript's
// tail decoded, and the notes written beside the audio (notes.md,
// transcript.json). The status names the notes.
func (m *Meetings) Stop() (MeetingStatus, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cur == nil {
		return m.status(), errors.New("no meeting is recording")
	}
	s, cancel := m.cur, m.cancel
	meta, words, err := s.Stop()
	cancel()
	m.cur, m.cancel, m.live = nil, nil, nil
	notes := meeting.Notes{Title: meetingTitle(meta), Started: meta.Started, Lines: meeting.Lines(words), Markers: meta.Markers}
	err = errors.Join(err, m.finished(meta, notes, true))
	return m.emitStatus(), err
}

// finished makes a finished meeting a History entry and starts its final
// pass; its notes so far (the live transcript's, written beside its audio
// when write is set) stand, in History and in the view, until the pass
// replaces them. Called with m.mu held.
func (m *Meetings) finished(meta meeting.Meta, notes meeting.Notes, write bool) error {
	dir := meeting.Dir(m.deps.root, meta.ID)
	var err error
	if write {
		err = writeMeetingNotes(dir, notes)
	}
	m.lastNotes, m.last = filepath.Join(dir, "notes.md"), notes
	it, herr := m.deps.history.addMeeting(meetingItem(dir, meta, notes, StatusTranscribing))
	if herr != nil {
		return errors.Join(err, herr)
	}
	m.lastItem = it.ID
	m.startPass(it.ID)
	return err
}

func writeNotes(path string, n meeting.Notes, format string) error {
	var b strings.Builder
	if err := n.Write(&b, format); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(b.String()), 0o600)
}

// Status reports the meeting being recorded, or the last notes.
func (m *Meetings) Status() MeetingStatus {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.status()
}

// status is where meetings stand now, with the next Rev. Called with m.mu
// held, so that Revs follow the order of the states they report.
func (m *Meetings) status() MeetingStatus {
	m.rev++
	st := MeetingStatus{Rev: m.rev, State: MeetingIdle, Notes: m.lastNotes, Item: m.lastItem, Offers: append([]MeetingOffer{}, m.offers...),
		Lines: viewLines(m.last.Lines), Markers: append([]meeting.Marker{}, m.last.Markers...), Final: m.last.Final,
		Summary: m.last.Summary}
	if p := m.passes[m.lastItem]; p != nil {
		st.Finishing, st.Progress = true, p.progress()
	}
	st.Summarizing = m.summaries[m.lastItem]
	if m.cur != nil {
		r := m.cur.Recorder()
		st.State, st.ID = MeetingRecording, r.ID()
		st.Seconds = float64(r.Frames()) / whisper.SampleRate
		st.Lines, st.Markers, st.Final, st.Summary, st.Summarizing = m.live.get(), r.Markers(), false, "", false
		st.Heard = m.live.progress()
	}
	return st
}

// emitStatus tells the view where meetings stand and returns it. Called
// with m.mu held.
func (m *Meetings) emitStatus() MeetingStatus {
	st := m.status()
	m.deps.emit.Emit(EventMeetingStatus, st)
	return st
}

// AddMarker puts the user's note on the recording meeting's timeline, at
// the audio recorded so far (meeting.MaxMarkerText characters at most).
func (m *Meetings) AddMarker(text string) (MeetingStatus, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cur == nil {
		return m.status(), errors.New("no meeting is recording")
	}
	r := m.cur.Recorder()
	if _, err := r.AddMarker(float64(r.Frames())/whisper.SampleRate, text); err != nil {
		return m.status(), err
	}
	return m.emitStatus(), nil
}

// List lists the meetings on disk, newest first.
func (m *Meetings) List() ([]meeting.Meta, error) { return meeting.List(m.deps.root) }

// close stops a meeting still recording (the app is quitting): the
// recording is finished at once, without the live transcript's tail.
func (m *Meetings) close() {
	m.mu.Lock()
	recording := m.cur != nil
	if recording {
		m.cancel()
	}
	m.mu.Unlock()
	if !recording {
		return
	}
	if _, err := m.Stop(); err != nil && !errors.Is(err, context.Canceled) {
		log.Printf("hark: stopping the meeting: %v", err)
	}
}

// command runs a meeting control command (control.MeetingCommands).
func (m *Meetings) command(cmd string) control.Reply {
	var st MeetingStatus
	var err error
	cmd, id, _ := control.SplitCommand(cmd) // the socket let only valid ones through
	switch cmd {
	case "meeting-start":
		st, err = m.Start()
	case "meeting-stop":
		st, err = m.Stop()
	case "meeting-status":
		st = m.Status()
	case "meeting-resume":
		st, err = m.Resume(id)
	case "meeting-finish":
		st, err = m.Finish(id)
	default:
		err = fmt.Errorf("unknown command %q", cmd)
	}
	r := control.Reply{State: st.State, Text: meetingText(st)}
	if err != nil {
		r.Error = err.Error()
	}
	return r
}

// meetingText is a status for `hark meeting`.
func meetingText(st MeetingStatus) string {
	var b []string
	if st.ID != "" {
		b = append(b, fmt.Sprintf("meeting %s, %s recorded", st.ID, (time.Duration(st.Seconds)*time.Second).String()))
	}
	if st.State == MeetingIdle && st.Notes != "" {
		b = append(b, "notes: "+st.Notes)
		if st.Finishing {
			b = append(b, "the final pass is running; its text replaces the notes'")
		}
	}
	for _, o := range st.Offers {
		b = append(b, fmt.Sprintf("cut short by a crash: meeting %s, at %s after %s (hark meeting resume|finish %s)",
			o.ID, o.CutAt.Local().Format("2006-01-02 15:04"), (time.Duration(o.Seconds)*time.Second).String(), o.ID))
	}
	return strings.Join(b, "\n")
}

// controlRouter sends the socket's meeting commands to Meetings and the
// others to Dictation.
type controlRouter struct {
	dict *Dictation
	meet *Meetings
}

func (r controlRouter) run(cmd string) control.Reply {
	if strings.HasPrefix(cmd, "meeting-") {
		return r.meet.command(cmd)
	}
	return r.dict.command(cmd)
}
