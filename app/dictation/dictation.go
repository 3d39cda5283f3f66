// Package dictation is the dictation pipeline: an input device armed with
// a pre-roll ring, every recording written to disk as it is captured, then
// on stop voice-activity trimming, transcription, optional clean-up and
// insertion into the focused app. Every dependency is a small interface,
// so package app wires in its model cache, history store and platform
// output, and tests wire in the real engine.
package dictation

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/audio/capture"
	"github.com/harkapp/hark/audio/vad"
)

// Segment is a timed piece of a transcript (seconds from the start of
// what was transcribed).
type Segment struct {
	Start float64 `json:"start"`
	End   float64 `json:"end"`
	Text  string  `json:"text"`
}

// Transcript is what a Transcriber returns.
type Transcript struct {
	Text     string
	Language string
	Segments []Segment
}

// Transcriber turns 16 kHz mono samples into text ("" language = the
// model's default or detection).
type Transcriber interface {
	Transcribe(ctx context.Context, samples []float32, language string) (Transcript, error)
}

// Cleaner tidies dictated text (punctuation, filler words) with an LLM.
type Cleaner interface {
	Cleanup(ctx context.Context, text string) (string, error)
}

// Output inserts text into the focused app (platform.Output).
type Output interface {
	Insert(text, mode string, restoreClipboard bool) error
}

// Config holds the user's dictation settings.
type Config struct {
	// Dir receives the recordings (created if missing).
	Dir      string
	DeviceID string
	PreRoll  time.Duration
	// Armed keeps the device open while idle (pre-roll; see RecorderConfig).
	Armed bool
	// AutoStop ends a recording after this much silence following speech
	// (toggle mode; 0 = off): Hooks.OnAutoStop is called, and the caller
	// stops as it would on the hotkey.
	AutoStop time.Duration
	VAD      vad.Config
	Language string
	// OutputMode is platform.ModePaste, ModeCopy or ModeType ("" = no
	// output; the caller shows the text).
	OutputMode       string
	RestoreClipboard bool
	Cleanup          bool
}

// Deps are the pipeline's collaborators; Open defaults to real capture,
// Cleaner and Output may be nil.
type Deps struct {
	Open        Opener
	Transcriber Transcriber
	Cleaner     Cleaner
	Output      Output
}

// Hooks report progress; all optional. They run on pipeline goroutines.
type Hooks struct {
	OnLevel       func(Level)
	OnAutoStop    func()
	OnDeviceEvent func(capture.Event)
	OnLimit       func()
}

// Result is a processed dictation.
type Result struct {
	Path     string
	Duration time.Duration // whole recording
	// SpeechStart/End bound what the VAD kept (within the recording).
	SpeechStart, SpeechEnd time.Duration
	Text                   string // final text (cleaned up when asked)
	RawText                string // the transcript
	Language               string
	Segments               []Segment
	// CleanupErr is set when clean-up failed (Text is then RawText).
	CleanupErr error
	// OutputErr is set when inserting failed (the text is still here).
	OutputErr  error
	Transcribe time.Duration
	Insert     time.Duration
}

// ErrNoSpeech is returned by Process for a recording without speech (the
// file is kept).
var ErrNoSpeech = vad.ErrNoSpeech

// Dictation runs recordings through the pipeline. Start/Stop are meant to
// be driven by the hotkey; Process by the caller once it has recorded the
// recording in its history.
type Dictation struct {
	cfg   Config
	deps  Deps
	hooks Hooks
	rec   *Recorder

	mu  sync.Mutex
	det *vad.Detector
	// autoFired is set once OnAutoStop ran for the current recording.
	autoFired bool
}

// New makes the pipeline; with cfg.Armed it opens the device now.
func New(cfg Config, deps Deps, hooks Hooks) (*Dictation, error) {
	if cfg.Dir == "" {
		return nil, errors.New("dictation: Config.Dir (recordings folder) is required")
	}
	if deps.Transcriber == nil {
		return nil, errors.New("dictation: Deps.Transcriber is required")
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, err
	}
	d := &Dictation{cfg: cfg, deps: deps, hooks: hooks}
	d.rec = NewRecorder(RecorderConfig{
		DeviceID: cfg.DeviceID, PreRoll: cfg.PreRoll, Armed: cfg.Armed,
		OnLevel: hooks.OnLevel, OnEvent: hooks.OnDeviceEvent, OnLimit: hooks.OnLimit,
		OnSamples: d.onSamples,
	}, deps.Open)
	if cfg.Armed {
		if err := d.rec.Arm(); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// Recorder gives access to the recorder (level, device).
func (d *Dictation) Recorder() *Recorder { return d.rec }

func (d *Dictation) onSamples(x []float32) {
	if d.cfg.AutoStop <= 0 {
		return
	}
	d.mu.Lock()
	det := d.det
	fire := false
	if det != nil && !d.autoFired {
		det.Write(x)
		if det.EndOfSpeech(d.cfg.AutoStop) {
			d.autoFired, fire = true, true
		}
	}
	d.mu.Unlock()
	if fire && d.hooks.OnAutoStop != nil {
		go d.hooks.OnAutoStop()
	}
}

// NewPath names a new recording file in Dir.
func (d *Dictation) NewPath(t time.Time) string {
	return filepath.Join(d.cfg.Dir, "dictation-"+t.Format("20060102-150405.000")+".wav")
}

// Start begins a recording; path "" picks NewPath(now). It returns the
// file's path (the file exists, and grows, from now on).
func (d *Dictation) Start(path string) (string, error) {
	if path == "" {
		path = d.NewPath(time.Now())
	}
	d.mu.Lock()
	d.det = vad.NewDetector(d.cfg.VAD)
	d.autoFired = false
	d.mu.Unlock()
	if err := d.rec.Start(path); err != nil {
		return "", err
	}
	return path, nil
}

// Stop ends the recording; its file is complete when Stop returns (even
// on error, the Recording holds what was captured).
func (d *Dictation) Stop() (*Recording, error) {
	d.mu.Lock()
	d.det = nil
	d.mu.Unlock()
	return d.rec.Stop()
}

// Process trims, transcribes, cleans up and outputs a recording.
func (d *Dictation) Process(ctx context.Context, rec *Recording) (Result, error) {
	return d.process(ctx, rec, d.deps.Output)
}

func (d *Dictation) process(ctx context.Context, rec *Recording, out Output) (Result, error) {
	res := Result{Path: rec.Path, Duration: rec.Duration}
	x := rec.Samples
	start, end, err := vad.Trim(x, d.cfg.VAD)
	if err != nil {
		return res, err
	}
	res.SpeechStart = time.Duration(start) * time.Second / capture.SampleRate
	res.SpeechEnd = time.Duration(end) * time.Second / capture.SampleRate
	t0 := time.Now()
	tr, err := d.deps.Transcriber.Transcribe(ctx, x[start:end], d.cfg.Language)
	res.Transcribe = time.Since(t0)
	if err != nil {
		return res, fmt.Errorf("dictation: transcribing: %w", err)
	}
	res.RawText, res.Text, res.Language, res.Segments = tr.Text, tr.Text, tr.Language, tr.Segments
	if d.cfg.Cleanup && d.deps.Cleaner != nil && res.Text != "" {
		if c, err := d.deps.Cleaner.Cleanup(ctx, res.Text); err != nil {
			res.CleanupErr = err
		} else {
			res.Text = c
		}
	}
	if out != nil && d.cfg.OutputMode != "" && res.Text != "" {
		t1 := time.Now()
		res.OutputErr = out.Insert(res.Text, d.cfg.OutputMode, d.cfg.RestoreClipboard)
		res.Insert = time.Since(t1)
	}
	return res, nil
}

// ProcessFile processes a recording left on disk (a crash before or
// during transcription): the WAV is complete up to the crash. Nothing is
// inserted into the focused app (the user is elsewhere by now) unless
// output is true.
func (d *Dictation) ProcessFile(ctx context.Context, path string, output bool) (Result, error) {
	x, err := audio.Load16k(path)
	if err != nil {
		return Result{Path: path}, err
	}
	out := d.deps.Output
	if !output {
		out = nil
	}
	return d.process(ctx, &Recording{Path: path, Samples: x,
		Duration: time.Duration(len(x)) * time.Second / capture.SampleRate}, out)
}

// Arm keeps the device open while idle (pre-roll); Disarm closes it
// (after the current recording). Other setting changes (device, output
// mode, language): Close and New again.
func (d *Dictation) Arm() error { return d.rec.Arm() }

// Disarm: see Arm.
func (d *Dictation) Disarm() error { return d.rec.Disarm() }

// Close stops any recording and closes the device.
func (d *Dictation) Close() error { return d.rec.Close() }
