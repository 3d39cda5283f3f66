package app

import (
	"context"
	"errors"
	"log"
	"sync"
	"sync/atomic"
	"time"

	"github.com/harkapp/hark/app/platform"
	"github.com/harkapp/hark/engine/runtime"
	"github.com/harkapp/hark/engine/whisper"
)

// Device is an audio input device.
type Device struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Default bool   `json:"default"`
}

// RecordOptions tell a Recorder where and how to capture.
type RecordOptions struct {
	// Path is the WAV file to write as samples arrive (its header kept
	// valid while it grows, so a crash leaves a playable file).
	Path string
	// Device is the input device's ID ("" = the default device).
	Device string
	// AutoStop, when positive, is the pause after speech that ends the
	// recording (toggle mode): the recorder then calls OnAutoStop.
	AutoStop time.Duration
	// OnLevel receives the input level (0..1) a few dozen times a second.
	OnLevel func(rms, peak float32)
	// OnPartial, if the recorder transcribes as it goes, receives text.
	OnPartial func(text string)
	// OnAutoStop is called (once, from the recorder's goroutine) when the
	// voice-activity detector ends the recording.
	OnAutoStop func()
	// OnSaveError is called at once when writing the WAV fails (the
	// recording goes on in memory).
	OnSaveError func(error)
	// Mic says when the device closes after this recording.
	Mic MicOptions
	// OnDevice is told when the input device changes under the recording
	// (lost, recording on the new default); OnNoDevice when none is left:
	// the recording should end, keeping what was captured.
	OnDevice   func(message string)
	OnNoDevice func()
}

// Recording is what a Recorder captured.
type Recording struct {
	// DurationMs is the length of the WAV file written.
	DurationMs int64
	// Samples are the 16 kHz mono samples to transcribe (silence trimmed
	// by the VAD); nil means transcribe the WAV file.
	Samples []float32
	// SaveErr: writing the WAV failed (a full disk); Samples are complete.
	SaveErr error
	// PreRollMs is the audio from before Start at the WAV's beginning
	// (an armed device's pre-roll).
	PreRollMs int64
}

// Recorder is the capture pipeline (implemented by app/dictation over
// malgo): the Dictation service drives it and does the rest (history row,
// transcription, clean-up, output).
type Recorder interface {
	Start(opt RecordOptions) error
	Stop() (Recording, error)
	Devices() ([]Device, error)
}

// dictationBeams: greedy decoding, the user is waiting for the text.
const dictationBeams = 1

// Dictation states.
const (
	DictIdle         = "idle"
	DictRecording    = "recording"
	DictTranscribing = "transcribing"
)

// DictationStatus is the payload of "dictation:state".
type DictationStatus struct {
	State     string `json:"state"` // idle | recording | transcribing
	Device    string `json:"device"`
	StartedAt int64  `json:"startedAt"` // unix ms, while recording
	LastText  string `json:"lastText"`
	Error     string `json:"error,omitempty"`
	ItemID    int64  `json:"itemId,omitempty"`
	Mode      string `json:"mode,omitempty"` // the recording's dictation mode
	// Rev orders the statuses: a later one has a larger Rev, also across
	// restarts (it counts on from the start's microsecond). Status's
	// reply and the "dictation:state" events reach the view by different
	// ways (the bridge's HTTP reply and its event stream, or Wails' IPC),
	// and events are sent after the lock is let go, so one can arrive
	// after a newer one; the view keeps the status with the largest Rev.
	Rev int64 `json:"rev"`
}

// Level is the payload of "dictation:level".
type Level struct {
	RMS  float32 `json:"rms"`
	Peak float32 `json:"peak"`
}

// Dictation is the dictation service: hotkey or UI starts it, the
// Recorder captures into a history item's WAV, Stop transcribes it with
// the shared speech model, optionally cleans it up with the chat model,
// and inserts the text through the platform Output.
type Dictation struct {
	deps dictationDeps
	rec  Recorder
	out  platform.Output

	mu    sync.Mutex
	st    DictationStatus
	rev   int64          // the last status's Rev (revised)
	cur   int64          // the item being recorded
	focus platform.Focus // chooses the mode (vocabulary.go)
	plan  *wordPlan      // the recording's mode and words, fixed at Start
	// cleanWith replaces the chat model as the clean-up (tests; cleanup.go).
	cleanWith atomic.Pointer[cleaner]
	later     laterState // "type now, perfect later" (perfect.go)
	// discardOnStart: a Stop, Cancel or Discard came while Start was
	// opening the device; the recording is discarded once it opens
	// (cancel.go).
	discardOnStart bool
	// started, when set (tests), runs when Start has claimed its
	// recording, before its status event goes out
	started func()

	// livePlan is the mode/vocabulary plan of the dictation being
	// recorded, liveUsed the prompt terms its live stream used
	// (stream.go); streamConfig tunes the live stream (zero: the
	// defaults; the loopback test streams the kit model unprompted, as it
	// was trained).
	livePlan     atomic.Pointer[wordPlan]
	liveUsed     atomic.Pointer[[]string]
	streamConfig whisper.StreamConfig
	// Recordings waiting for disk space (savefail.go): samples held, and
	// the retry period and writer tests replace.
	unsaved   atomic.Int64
	saveRetry time.Duration
	saveWAV   func(path string, x []float32) error
}

// dictationDeps is what Dictation uses of the other services, given at
// construction: their steps, never the App.
type dictationDeps struct {
	life     *lifetime // Close ends a transcription and the background passes
	emit     Emitter
	settings settingsReader
	history  recordings
	models   interface {
		speechModels
		resolveChat(arg string) (path, name string, err error)
		withChat(ctx context.Context, path string, f func(*runtime.LLMModel) error) error
	}
	transcription interface {
		transcribeWith(ctx context.Context, id int64, model string, samples []float32, beams int, pri runtime.Priority, progress func(float64, *whisper.Segment), plan *wordPlan) (Item, error)
		storeTranscript(id int64, res *whisper.Result, name string, plan *wordPlan, used []string) (Item, error)
	}
	// chat is the clean-up model unless SetCleaner put in another
	// (cleanup.go).
	chat cleaner
}

// recordings is the part of History a dictation writes.
type recordings interface {
	BeginRecording() (Item, error)
	FinishRecording(id int64, durationMs int64) (Item, error)
	Get(id int64) (Item, error)
	Delete(id int64) error
	noteAudioNotKept(it Item, err error) Item
	noteAudioKept(id int64)
}

// errNoRecorder is returned when the app was built without capture.
var errNoRecorder = errors.New("dictation is not available: no audio capture in this build")

// setState changes the status and sends it, with the next Rev.
func (d *Dictation) setState(f func(*DictationStatus)) DictationStatus {
	d.mu.Lock()
	f(&d.st)
	st := d.revised()
	d.mu.Unlock()
	d.deps.emit.Emit(EventDictationState, st)
	return st
}

// Start begins a recording: its history row and WAV path first, then
// capture.
func (d *Dictation) Start() error {
	set, err := d.deps.settings.Get()
	if err != nil {
		return err
	}
	d.mu.Lock()
	rec := d.rec
	if rec == nil {
		d.mu.Unlock()
		return errNoRecorder
	}
	if d.st.State != DictIdle && d.st.State != "" {
		d.mu.Unlock()
		return errors.New("dictation is already " + d.st.State)
	}
	d.st.State = DictRecording // claims the service while the row is made
	d.discardOnStart = false
	d.mu.Unlock()

	plan, err := planFor(set, d.focusedApp(), true)
	if err != nil {
		d.setState(func(s *DictationStatus) { s.State, s.Error = DictIdle, err.Error() })
		return err
	}
	d.preloadSpeech()
	if plan.cleanup != "" {
		d.preloadChat() // its load must not eat the clean-up's time limit
	}
	it, err := d.deps.history.BeginRecording()
	if err != nil {
		d.setState(func(s *DictationStatus) { s.State, s.Error = DictIdle, err.Error() })
		return err
	}
	var auto time.Duration
	if set.AutoStop && set.HotkeyMode == "toggle" {
		auto = time.Duration(set.AutoStopMs) * time.Millisecond
	}
	d.livePlan.Store(plan) // the live stream follows the same mode (app/stream.go)
	err = rec.Start(RecordOptions{
		Path: it.AudioPath, Device: set.InputDevice, AutoStop: auto,
		OnLevel:     func(rms, peak float32) { d.deps.emit.Emit(EventDictationLevel, Level{RMS: rms, Peak: peak}) },
		OnPartial:   func(text string) { d.deps.emit.Emit(EventDictationPartial, PartialText{Text: text}) },
		OnAutoStop:  func() { go d.stopQuietly() },
		OnSaveError: d.saveFailed, // app/savefail.go
		Mic:         MicOptionsOf(set),
		OnDevice:    func(msg string) { d.deps.emit.Emit(EventDictationWarning, Warning{Message: msg}) },
		OnNoDevice:  d.stopQuietly,
	})
	if err != nil {
		// Nothing was recorded: the device never opened.
		d.dropItem(it.ID)
		d.setState(func(s *DictationStatus) { s.State, s.Error = DictIdle, err.Error() })
		return err
	}
	// The recording and its status are one step under the lock: a Cancel
	// or Stop between them found d.cur set, ended it, and the status set
	// after that said "recording" with nothing recording (Stop: "not
	// recording", Start: "already recording").
	d.mu.Lock()
	discard := d.discardOnStart
	d.discardOnStart = false
	var st DictationStatus
	if !discard {
		d.cur, d.plan = it.ID, plan
		s := &d.st
		s.State, s.Device, s.StartedAt, s.Error, s.ItemID, s.Mode = DictRecording, set.InputDevice, it.CreatedAt, "", it.ID, plan.mode
		st = d.revised()
	}
	d.mu.Unlock()
	if d.started != nil {
		d.started()
	}
	if discard {
		// Ended (Stop, Cancel, Discard, the app closing) while the device
		// opened: nothing was captured, nothing is kept (cancel.go).
		if a, ok := rec.(aborter); ok {
			_, _ = a.Abort() // discarded: nothing of it is kept
		} else {
			_, _ = rec.Stop()
		}
		d.dropItem(it.ID)
		d.setState(func(s *DictationStatus) { s.State, s.StartedAt, s.ItemID, s.Error = DictIdle, 0, 0, "" })
		return nil
	}
	d.deps.emit.Emit(EventDictationState, st)
	return nil
}

// Stop ends the recording, transcribes it, cleans it up when the settings
// say so, inserts the text, and returns the history item. The recording
// stays in History (pending) even when transcription fails.
func (d *Dictation) Stop() (Item, error) {
	it, _, err := d.stopInserted()
	return it, err
}

// stopQuietly is Stop for callers with no one to answer (auto-stop, a
// lost device, a trigger): its outcome reaches the UI through the status
// and events, as every Stop's does.
func (d *Dictation) stopQuietly() { _, _ = d.Stop() }

// dropItem deletes the item of a recording that captured nothing; a
// failure leaves an empty item in History, which the log explains.
func (d *Dictation) dropItem(id int64) {
	if err := d.deps.history.Delete(id); err != nil {
		log.Printf("hark: removing the empty recording %d: %v", id, err)
	}
}

// finishRecording marks a recording that ended badly as ended, with the
// length it reached; the caller reports the first failure.
func (d *Dictation) finishRecording(id int64, ms int64) {
	if _, err := d.deps.history.FinishRecording(id, ms); err != nil {
		log.Printf("hark: closing recording %d: %v", id, err)
	}
}

// stopInserted is Stop that also returns the text inserted (after the
// mode's replacements and clean-up), which `hark dictate stop` prints.
func (d *Dictation) stopInserted() (Item, string, error) {
	s, err := d.beginStop()
	if err != nil {
		return Item{}, "", err
	}
	return d.finishStop(s)
}

// stopping is a recording that beginStop took from the service.
type stopping struct {
	rec  Recorder
	out  platform.Output
	id   int64
	plan *wordPlan
}

// beginStop takes the recording away from the service: the state is
// "transcribing" when it returns, so a caller that answers at once (a
// toggle) reports the new state.
func (d *Dictation) beginStop() (stopping, error) {
	d.mu.Lock()
	s := stopping{rec: d.rec, out: d.out, id: d.cur, plan: d.plan}
	if d.discardWhileStarting() {
		d.mu.Unlock()
		return s, errStarting
	}
	if d.st.State != DictRecording || s.id == 0 {
		d.mu.Unlock()
		return s, errors.New("dictation is not recording")
	}
	d.cur = 0
	d.st.State = DictTranscribing
	d.mu.Unlock()
	d.setState(func(s *DictationStatus) { s.StartedAt = 0 })
	return s, nil
}

// finishStop ends the capture beginStop took, transcribes, cleans up and
// inserts.
func (d *Dictation) finishStop(st stopping) (Item, string, error) {
	rec, out, id, plan := st.rec, st.out, st.id, st.plan
	fail := func(err error) (Item, string, error) {
		d.setState(func(s *DictationStatus) { s.State, s.Error = DictIdle, err.Error() })
		return Item{}, "", err
	}
	r, err := rec.Stop()
	if err != nil {
		d.finishRecording(id, r.DurationMs)
		return fail(err)
	}
	if _, err := d.deps.history.FinishRecording(id, r.DurationMs); err != nil {
		return fail(err)
	}
	it, err := d.finishDictation(d.deps.life.ctx, id, rec, r, plan) // app/stream.go
	// A recording that could not be written: app/savefail.go.
	if r.SaveErr != nil {
		if err == nil {
			it = d.deps.history.noteAudioNotKept(it, r.SaveErr)
		}
		if cur, gerr := d.deps.history.Get(id); gerr == nil {
			d.keepUnsaved(id, cur.AudioPath, r.Samples)
		}
	}
	if err != nil {
		return fail(err)
	}
	set, _ := d.deps.settings.Get()
	text, outErr := d.finishText(plan, it.Text, wordsOf(it.Segments), out, set.RestoreClipboard)
	d.setState(func(s *DictationStatus) {
		s.State, s.LastText, s.Error = DictIdle, text, ""
		if r.SaveErr != nil {
			s.Error = saveErrorMessage(r.SaveErr)
		}
		if outErr != nil {
			s.Error = "inserting the text: " + outErr.Error()
		}
	})
	d.deps.emit.Emit(EventDictationDone, it)
	if set.PerfectLater && r.SaveErr == nil && outErr == nil {
		d.perfectLater(it.ID, plan, text, set.PerfectModel) // app/perfect.go
	}
	return it, text, outErr
}

// Toggle starts a recording when idle and stops one that runs (the stop
// and its transcription finish in the background; events report them).
func (d *Dictation) Toggle() error {
	d.mu.Lock()
	state := d.st.State
	d.mu.Unlock()
	switch state {
	case DictRecording:
		s, err := d.beginStop() // the state is "transcribing" on return
		if err != nil {
			return err
		}
		go func() { _, _, _ = d.finishStop(s) }() // it reports through the status
		return nil
	case DictTranscribing:
		return errors.New("dictation is still transcribing")
	default:
		return d.Start()
	}
}

// preloadSpeech loads the speech model in the background if it is not
// loaded (idle unload may have dropped it), so it is ready by the time the
// user stops speaking instead of adding its load time to the wait.
func (d *Dictation) preloadSpeech() {
	path, _, err := d.deps.models.resolveSpeech("")
	if err != nil {
		return
	}
	d.deps.life.background(func() {
		// A warm-up: the dictation that uses the model reports a failed load.
		_ = d.deps.models.withSpeech(d.deps.life.ctx, path, runtime.Dictation, func(*runtime.SpeechModel) error { return nil })
	})
}

// setRecorder plugs in the capture pipeline when it is built after New.
func (d *Dictation) setRecorder(r Recorder) {
	d.mu.Lock()
	d.rec = r
	d.mu.Unlock()
	d.livePreview(r)
}

// setOutput plugs in the platform's text output.
func (d *Dictation) setOutput(o platform.Output) {
	d.mu.Lock()
	d.out = o
	d.mu.Unlock()
}

// Status reports the dictation state.
func (d *Dictation) Status() (DictationStatus, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	st := d.revised()
	if st.State == "" {
		st.State = DictIdle
	}
	return st, nil
}

// revised is the status with the next Rev. Called with d.mu held, so
// that Revs follow the order of the states they report.
func (d *Dictation) revised() DictationStatus {
	d.rev++
	st := d.st
	st.Rev = d.rev
	return st
}

// Devices lists the microphones to choose from (app/micdevices.go).
func (d *Dictation) Devices() ([]Device, error) {
	d.mu.Lock()
	rec := d.rec
	d.mu.Unlock()
	if rec == nil {
		return []Device{}, errNoRecorder
	}
	ds, err := rec.Devices()
	if err != nil {
		return ds, err
	}
	set, _ := d.deps.settings.Get()
	return microphones(ds, set.InputDevice), nil
}

// recording reports whether item id is being captured now.
func (d *Dictation) recording(id int64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cur == id && id != 0
}

// close stops a running capture, keeping its audio as a pending item.
func (d *Dictation) close() {
	d.mu.Lock()
	rec, id := d.rec, d.cur
	d.discardWhileStarting() // a Start still opening the device ends there
	d.cur = 0
	d.st.State = DictIdle
	d.mu.Unlock()
	if rec != nil && id != 0 {
		r, err := rec.Stop()
		if err == nil {
			d.finishRecording(id, r.DurationMs)
		}
	}
}
