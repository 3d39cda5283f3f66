package meeting

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/harkapp/hark/audio"
	am "github.com/harkapp/hark/audio/meeting"
)

// RecorderConfig configures a Recorder.
type RecorderConfig struct {
	// Root is the meetings folder (one folder per meeting in it).
	Root string
	// Rate is the sample rate (default 16000).
	Rate int
	// OnSaveError is told at once when the file stops being written (a
	// full disk), once per outage; recording goes on into a bounded
	// backlog that is written when space returns.
	OnSaveError func(error)
	// MaxBacklog bounds the audio held while the disk is full (default 2
	// minutes, 15 MB); beyond it the oldest is given up and counted in
	// Meta.LostSeconds.
	MaxBacklog time.Duration
	// CreateFile opens the audio file (default audio.CreateFile; tests
	// inject a full disk).
	CreateFile func(path string) (audio.WAVFile, error)
}

// Recorder streams a meeting's frames to disk: memory holds only what the
// disk refused.
type Recorder struct {
	cfg RecorderConfig
	dir string

	mu      sync.Mutex
	meta    Meta
	w       *audio.WAVWriter
	backlog []float32
	failing bool
	lost    int64 // frames given up
	closed  bool
}

// newID names a meeting by its start time (unique: a clash gets a suffix).
func newID(root string, t time.Time) (string, error) {
	base := t.UTC().Format("20060102-150405")
	for i := 0; i < 100; i++ {
		id := base
		if i > 0 {
			id = fmt.Sprintf("%s-%d", base, i)
		}
		err := os.Mkdir(filepath.Join(root, id), 0o700)
		if err == nil {
			return id, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", err
		}
	}
	return "", errors.New("meeting: too many meetings started in one second")
}

// Start creates a meeting folder under cfg.Root, started at now.
func Start(cfg RecorderConfig, now time.Time) (*Recorder, error) {
	if cfg.Rate <= 0 {
		cfg.Rate = 16000
	}
	if cfg.MaxBacklog <= 0 {
		cfg.MaxBacklog = 2 * time.Minute
	}
	if cfg.CreateFile == nil {
		cfg.CreateFile = audio.CreateFile
	}
	if err := os.MkdirAll(cfg.Root, 0o700); err != nil {
		return nil, fmt.Errorf("meeting: %w", err)
	}
	id, err := newID(cfg.Root, now)
	if err != nil {
		return nil, fmt.Errorf("meeting: %w", err)
	}
	r := &Recorder{cfg: cfg, dir: Dir(cfg.Root, id),
		meta: Meta{ID: id, Started: now, State: StateRecording, Rate: cfg.Rate, Channels: am.Channels}}
	f, err := cfg.CreateFile(filepath.Join(r.dir, AudioName))
	if err == nil {
		r.w, err = audio.NewWAVWriterChannels(f, cfg.Rate, am.Channels)
	}
	if err == nil {
		err = writeMeta(r.dir, r.meta)
	}
	if err != nil {
		os.RemoveAll(r.dir)
		return nil, fmt.Errorf("meeting: creating the recording: %w", err)
	}
	return r, nil
}

// Resume goes on recording the meeting id, one a crash cut short: its
// audio is made whole (Interrupt) and the new frames are appended to it,
// so the timeline continues at the length recorded (the gap is not
// recorded); its markers are kept. A finished meeting is ErrFinished.
func Resume(cfg RecorderConfig, id string) (*Recorder, error) {
	m, err := Interrupt(cfg.Root, id)
	if err != nil {
		return nil, err
	}
	if m.Channels != am.Channels || m.Rate <= 0 || cfg.Rate > 0 && cfg.Rate != m.Rate {
		return nil, fmt.Errorf("meeting %s: recorded as %d channels at %d Hz, not resumable here", id, m.Channels, m.Rate)
	}
	cfg.Rate = m.Rate
	if cfg.MaxBacklog <= 0 {
		cfg.MaxBacklog = 2 * time.Minute
	}
	dir := Dir(cfg.Root, id)
	w, err := audio.AppendWAV(filepath.Join(dir, AudioName), m.Rate, am.Channels)
	if err != nil {
		return nil, fmt.Errorf("meeting %s: reopening the recording: %w", id, err)
	}
	m.State, m.SaveError = StateRecording, ""
	if err := writeMeta(dir, m); err != nil {
		w.Close()
		return nil, fmt.Errorf("meeting %s: %w", id, err)
	}
	return &Recorder{cfg: cfg, dir: dir, meta: m, w: w, lost: int64(m.LostSeconds * float64(m.Rate))}, nil
}

// ID is the meeting's id.
func (r *Recorder) ID() string { return r.meta.ID }

// Dir is the meeting's folder.
func (r *Recorder) Dir() string { return r.dir }

// Write appends interleaved frames {You, Others}. It never fails: a
// refused write is reported through OnSaveError and kept for later.
func (r *Recorder) Write(frames []float32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || len(frames) == 0 {
		return
	}
	pending := frames
	if len(r.backlog) > 0 {
		r.backlog = append(r.backlog, frames...)
		pending = r.backlog
	}
	rest, err := r.write(pending)
	if len(rest) == 0 {
		r.backlog, r.failing = r.backlog[:0], false
		return
	}
	if !r.failing {
		r.failing = true
		r.meta.SaveError = err.Error()
		if r.cfg.OnSaveError != nil {
			r.cfg.OnSaveError(err)
		}
	}
	r.backlog = append(r.backlog[:0], rest...) // rest may be backlog's own tail: append copies forward
	if over := len(r.backlog) - int(r.cfg.MaxBacklog.Seconds()*float64(r.cfg.Rate))*am.Channels; over > 0 {
		r.backlog = r.backlog[:copy(r.backlog, r.backlog[over:])]
		r.lost += int64(over / am.Channels)
	}
}

// write writes x and returns what did not make it to the file (a whole
// number of frames: the writer takes all of a write or none of it).
func (r *Recorder) write(x []float32) ([]float32, error) {
	before := r.w.Samples()
	err := r.w.Write(x)
	return x[int(r.w.Samples()-before)*am.Channels:], err
}

// Frames is how many frames are on disk.
func (r *Recorder) Frames() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.w.Samples()
}

// Markers are bounded (meta.json is rewritten at each one, and read back
// under maxMeta): MaxMarkerText characters each, MaxMarkers a meeting.
const (
	MaxMarkerText = 200
	MaxMarkers    = 1000
)

// AddMarker puts a note on the timeline, at seconds from the start: its
// text trimmed, not empty, at most MaxMarkerText characters.
func (r *Recorder) AddMarker(at float64, text string) (Marker, error) {
	text = strings.TrimSpace(text)
	switch n := utf8.RuneCountInString(text); {
	case n == 0:
		return Marker{}, errors.New("meeting: a marker needs a text")
	case n > MaxMarkerText || !utf8.ValidString(text):
		return Marker{}, fmt.Errorf("meeting: a marker's text is at most %d characters of UTF-8", MaxMarkerText)
	}
	if math.IsNaN(at) || at < 0 {
		return Marker{}, fmt.Errorf("meeting: a marker at %v s", at)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.meta.Markers) >= MaxMarkers {
		return Marker{}, fmt.Errorf("meeting: at most %d markers a meeting", MaxMarkers)
	}
	mk := Marker{At: at, Text: text}
	r.meta.Markers = append(r.meta.Markers, mk)
	if err := writeMeta(r.dir, r.meta); err != nil {
		r.meta.Markers = r.meta.Markers[:len(r.meta.Markers)-1]
		return Marker{}, err
	}
	return mk, nil
}

// Markers returns the markers so far.
func (r *Recorder) Markers() []Marker {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Marker{}, r.meta.Markers...)
}

// Stop writes what is left, closes the file and marks the meeting
// finished.
func (r *Recorder) Stop() (Meta, error) { return r.close(StateFinished) }

// close writes what is left, closes the file and leaves the meeting in
// state (a resumed meeting whose capture failed to start is interrupted
// again, still offered).
func (r *Recorder) close(state string) (Meta, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return r.meta, nil
	}
	r.closed = true
	if len(r.backlog) > 0 {
		rest, _ := r.write(r.backlog)
		r.lost += int64(len(rest) / am.Channels)
	}
	r.backlog = nil
	r.meta.Duration = float64(r.w.Samples()) / float64(r.cfg.Rate)
	r.meta.LostSeconds = float64(r.lost) / float64(r.cfg.Rate)
	r.meta.State = state
	err := r.w.Close()
	if merr := writeMeta(r.dir, r.meta); err == nil {
		err = merr
	}
	return r.meta, err
}
