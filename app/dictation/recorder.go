package dictation

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/audio/capture"
)

// Source is an open input device (capture.Stream in the app).
type Source interface {
	Start() error
	Stop() error
	Close() error
	Device() capture.Device
}

// Opener opens an input device that delivers to o.OnData.
type Opener func(o capture.Options) (Source, error)

// CaptureOpener opens a real device with audio/capture.
func CaptureOpener(o capture.Options) (Source, error) {
	s, err := capture.Open(o)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Level is the input level of the last audio period, for a meter.
type Level struct {
	RMS  float32 `json:"rms"`
	Peak float32 `json:"peak"`
}

// RecorderConfig configures a Recorder.
type RecorderConfig struct {
	// DeviceID picks the input device ("" = default).
	DeviceID string
	// PreRoll is how much audio from before Start a recording keeps
	// (default 500 ms), so the first word is never cut off. It only
	// exists while the device is armed.
	PreRoll time.Duration
	// Armed keeps the device capturing between recordings (into the
	// pre-roll ring only): Start then costs nothing and includes PreRoll
	// of audio. Unarmed, the device opens at Start and closes at Stop
	// (no pre-roll, and the OS microphone indicator is off when idle).
	Armed bool
	// MaxDuration bounds one recording (default 30 min); OnLimit is
	// called when it is reached and later audio is dropped.
	MaxDuration time.Duration
	OnLimit     func()
	// OnLevel receives the level about 20 times a second while recording.
	OnLevel func(Level)
	// OnSamples receives the recording's samples as they are written
	// (from the writer goroutine: blocking here delays only the file).
	OnSamples func([]float32)
	// OnEvent is told about lost and reopened devices.
	OnEvent func(capture.Event)
	// OnSaveError is told, once and at once, when writing the recording's
	// file fails (a full disk): the samples are still kept in memory (up
	// to MaxDuration) and the Recording carries SaveErr.
	OnSaveError func(error)
	// CreateFile opens the recording's file (default audio.CreateFile).
	CreateFile func(path string) (audio.WAVFile, error)
	// StartTimeout bounds opening and starting the device (default
	// 10 s): a device that hangs there fails the Start with
	// ErrDeviceSlow instead of holding the dictation, and is closed
	// whenever it does start.
	StartTimeout time.Duration
	// DrainMax bounds how long Stop waits for audio the device captured
	// before the release but has not delivered yet (default 1 s): a
	// loaded machine runs the capture thread late, and the dictation's
	// last word would be cut off.
	DrainMax time.Duration
}

// ErrRecordingFile: the recording's file could not be created.
var ErrRecordingFile = errors.New("dictation: creating the recording file")

// ErrDeviceSlow: the input device did not start within StartTimeout.
var ErrDeviceSlow = errors.New("the microphone did not start in time")

// Recording is a finished recording.
type Recording struct {
	Path      string
	Samples   []float32 // 16 kHz mono, pre-roll included
	PreRoll   time.Duration
	StartedAt time.Time // when Start was called
	Duration  time.Duration
	// SaveErr is why the file is incomplete (nil: it holds Samples); the
	// samples are complete either way.
	SaveErr error
	// FirstSample is the time from Start to the first sample captured
	// after it (with an armed device the pre-roll already covers it).
	FirstSample time.Duration
	Device      capture.Device
}

// Recorder captures recordings from an input device: a ring buffer of
// pre-roll while armed, then every sample into memory and, from a writer
// goroutine, into a WAV file that is valid at every moment.
type Recorder struct {
	cfg  RecorderConfig
	open Opener

	mu        sync.Mutex
	armed     bool
	src       Source
	running   bool
	ring      []float32
	ringPos   int
	ringFull  bool
	ringAt    time.Time // when the ring got its first sample
	recording bool
	starting  bool // a Start is opening the device
	limited   bool
	rec       []float32
	startAt   time.Time
	firstAt   time.Time
	preRoll   int
	// The delivery timeline since Start: the least lag of a delivery
	// behind the wall clock (samples; the device's own latency), and what
	// Stop waits for; +Inf until the first delivery.
	minLag    float64
	drainNeed int
	drained   chan struct{}
	now       func() time.Time // the clock (tests set it)

	level  atomic.Uint64 // rms and peak float32 bits
	notify chan struct{}
	stop   chan struct{}
	done   chan error
	w      *audio.WAVWriter
	path   string
}

// NewRecorder makes a recorder; it opens nothing until Arm or Start.
func NewRecorder(cfg RecorderConfig, open Opener) *Recorder {
	if cfg.PreRoll <= 0 {
		cfg.PreRoll = 500 * time.Millisecond
	}
	if cfg.MaxDuration <= 0 {
		cfg.MaxDuration = 30 * time.Minute
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 10 * time.Second
	}
	if cfg.DrainMax <= 0 {
		cfg.DrainMax = time.Second
	}
	if open == nil {
		open = CaptureOpener
	}
	return &Recorder{cfg: cfg, open: open, armed: cfg.Armed, now: time.Now,
		ring: make([]float32, int(cfg.PreRoll.Seconds()*capture.SampleRate))}
}

// onData runs on the audio thread: copy and return.
func (r *Recorder) onData(x []float32) {
	var sum float64
	var peak float32
	for _, v := range x {
		sum += float64(v) * float64(v)
		peak = max(peak, float32(math.Abs(float64(v))))
	}
	rms := float32(math.Sqrt(sum / float64(max(1, len(x)))))
	r.level.Store(uint64(math.Float32bits(rms))<<32 | uint64(math.Float32bits(peak)))

	r.mu.Lock()
	if r.recording {
		now := r.now()
		if r.firstAt.IsZero() {
			r.firstAt = now
		}
		if len(r.rec)+len(x) <= int(r.cfg.MaxDuration.Seconds()*capture.SampleRate) {
			r.rec = append(r.rec, x...)
			lag := now.Sub(r.startAt).Seconds()*capture.SampleRate - float64(len(r.rec)-r.preRoll)
			r.minLag = min(r.minLag, lag)
			if r.drained != nil && len(r.rec) >= r.drainNeed {
				close(r.drained)
				r.drained = nil
			}
		} else if !r.limited {
			r.limited = true
			if r.cfg.OnLimit != nil {
				go r.cfg.OnLimit()
			}
		}
	} else if len(r.ring) > 0 {
		if r.ringAt.IsZero() {
			r.ringAt = r.now()
		}
		for len(x) > 0 {
			n := copy(r.ring[r.ringPos:], x)
			x = x[n:]
			r.ringPos += n
			if r.ringPos == len(r.ring) {
				r.ringPos, r.ringFull = 0, true
			}
		}
	}
	notify := r.notify
	r.mu.Unlock()
	if notify != nil {
		select {
		case notify <- struct{}{}:
		default:
		}
	}
}

// Level is the last period's level (also while idle but armed).
func (r *Recorder) Level() Level {
	v := r.level.Load()
	return Level{RMS: math.Float32frombits(uint32(v >> 32)), Peak: math.Float32frombits(uint32(v))}
}

// ensureOpen opens and starts the device, waiting at most StartTimeout.
// Called with r.mu NOT held (the audio thread takes it).
func (r *Recorder) ensureOpen() error {
	r.mu.Lock()
	src, running := r.src, r.running
	r.mu.Unlock()
	if running {
		return nil
	}
	type opened struct {
		src Source
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		s := src
		if s == nil {
			var err error
			s, err = r.open(capture.Options{DeviceID: r.cfg.DeviceID, OnData: r.onData, OnEvent: r.cfg.OnEvent})
			if err != nil {
				ch <- opened{err: err}
				return
			}
		}
		if err := s.Start(); err != nil {
			s.Close()
			ch <- opened{err: err}
			return
		}
		ch <- opened{src: s}
	}()
	timer := time.NewTimer(r.cfg.StartTimeout)
	defer timer.Stop()
	select {
	case o := <-ch:
		if o.err != nil {
			return o.err
		}
		r.mu.Lock()
		r.src, r.running = o.src, true
		r.mu.Unlock()
		return nil
	case <-timer.C:
		// Given up on: closed whenever it starts, so it never captures
		// behind the user's back.
		go func() {
			if o := <-ch; o.src != nil {
				o.src.Close()
			}
		}()
		return fmt.Errorf("%w (%v)", ErrDeviceSlow, r.cfg.StartTimeout)
	}
}

// Arm opens the device and keeps it capturing into the pre-roll ring.
func (r *Recorder) Arm() error {
	r.mu.Lock()
	r.armed = true
	r.mu.Unlock()
	return r.ensureOpen()
}

// Disarm closes the device unless a recording is going on (then it closes
// at Stop).
func (r *Recorder) Disarm() error {
	r.mu.Lock()
	r.armed = false
	busy := r.recording
	r.mu.Unlock()
	if busy {
		return nil
	}
	return r.closeSource()
}

func (r *Recorder) closeSource() error {
	r.mu.Lock()
	src := r.src
	r.src, r.running = nil, false
	r.ringPos, r.ringFull, r.ringAt = 0, false, time.Time{}
	r.mu.Unlock()
	if src == nil {
		return nil
	}
	return src.Close()
}

// Device is the device in use (zero when none is open).
func (r *Recorder) Device() capture.Device {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.src == nil {
		return capture.Device{}
	}
	return r.src.Device()
}

// Recording reports whether a recording is going on.
func (r *Recorder) Recording() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.recording
}

// Captured is how much audio the current recording holds (pre-roll
// included), for a duration display.
func (r *Recorder) Captured() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return time.Duration(len(r.rec)) * time.Second / capture.SampleRate
}

// Start begins a recording into a new WAV file at path. With an armed
// device it includes the pre-roll and takes effect at once. The device is
// opened before the recording begins, so a device that fails to open (or
// hangs) leaves nothing running: no writer, no recording state.
func (r *Recorder) Start(path string) error {
	startAt := r.now()
	r.mu.Lock()
	if r.recording || r.starting {
		r.mu.Unlock()
		return errors.New("dictation: already recording")
	}
	r.starting = true
	wasRunning := r.running
	r.mu.Unlock()
	ok := false
	defer func() {
		if !ok {
			r.mu.Lock()
			r.starting = false
			r.mu.Unlock()
		}
	}()
	create := r.cfg.CreateFile
	if create == nil {
		create = audio.CreateFile
	}
	f, err := create(path)
	var w *audio.WAVWriter
	if err == nil {
		w, err = audio.NewWAVWriter(f, capture.SampleRate)
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrRecordingFile, err)
	}
	if err := r.ensureOpen(); err != nil {
		w.Close()
		return err
	}
	ok = true
	r.mu.Lock()
	r.rec = make([]float32, 0, 30*capture.SampleRate)
	if r.ringFull {
		r.rec = append(r.rec, r.ring[r.ringPos:]...)
	}
	r.rec = append(r.rec, r.ring[:r.ringPos]...)
	// A device opened by this Start has no pre-roll: what its ring holds
	// came after the hotkey, and is kept as the recording's beginning.
	r.preRoll = 0
	r.startAt, r.firstAt = startAt, time.Time{}
	if wasRunning {
		r.preRoll = len(r.rec)
	} else if len(r.rec) > 0 {
		r.firstAt = r.ringAt
	}
	r.ringPos, r.ringFull, r.ringAt = 0, false, time.Time{}
	r.recording, r.starting, r.limited, r.minLag = true, false, false, math.Inf(1)
	r.w, r.path = w, path
	r.notify, r.stop, r.done = make(chan struct{}, 1), make(chan struct{}), make(chan error, 1)
	go r.writer(w, r.notify, r.stop, r.done)
	r.mu.Unlock()
	return nil
}

// writer drains new samples to the file, the OnSamples hook and the level
// meter until stop, then writes what is left.
func (r *Recorder) writer(w *audio.WAVWriter, notify, stop chan struct{}, done chan error) {
	var written int
	var werr error
	lastLevel := time.Time{}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	flush := func() {
		r.mu.Lock()
		fresh := r.rec[written:len(r.rec):len(r.rec)]
		r.mu.Unlock()
		if len(fresh) == 0 {
			return
		}
		written += len(fresh)
		if werr == nil {
			if werr = w.Write(fresh); werr != nil && r.cfg.OnSaveError != nil {
				r.cfg.OnSaveError(werr)
			}
		}
		if r.cfg.OnSamples != nil {
			r.cfg.OnSamples(fresh)
		}
	}
	for {
		select {
		case <-stop:
			flush()
			done <- werr
			return
		case <-notify:
			flush()
		case <-tick.C:
			flush()
		}
		if r.cfg.OnLevel != nil && time.Since(lastLevel) >= 50*time.Millisecond {
			lastLevel = time.Now()
			r.cfg.OnLevel(r.Level())
		}
	}
}

// Stop ends the recording, finishes its file and returns it. The device
// stays armed (or is closed when not armed).
func (r *Recorder) Stop() (*Recording, error) {
	r.drain()
	r.mu.Lock()
	if !r.recording {
		r.mu.Unlock()
		return nil, errors.New("dictation: not recording")
	}
	r.recording, r.drained = false, nil
	stop, done, w := r.stop, r.done, r.w
	r.mu.Unlock()
	close(stop)
	werr := <-done
	cerr := w.Close()
	r.mu.Lock()
	rec := &Recording{
		Path:      r.path,
		Samples:   r.rec,
		PreRoll:   time.Duration(r.preRoll) * time.Second / capture.SampleRate,
		StartedAt: r.startAt,
		Duration:  time.Duration(len(r.rec)) * time.Second / capture.SampleRate,
	}
	if !r.firstAt.IsZero() {
		rec.FirstSample = r.firstAt.Sub(r.startAt)
	}
	if r.src != nil {
		rec.Device = r.src.Device()
	}
	r.rec, r.w, r.notify = nil, nil, nil
	armed := r.armed
	r.mu.Unlock()
	if werr == nil {
		werr = cerr
	}
	if werr != nil {
		// The samples are all in memory: the dictation goes on from them.
		rec.SaveErr = fmt.Errorf("dictation: writing the recording: %w", werr)
	}
	if !armed {
		if err := r.closeSource(); err != nil {
			return rec, err
		}
	}
	return rec, nil
}

// drainSlack is the audio at the release that Stop does not wait for: a
// device delivers a period at a time, and waiting for the period in
// flight would add its length to every dictation for a few milliseconds
// of sound after the words.
const drainSlack = 0.02 * capture.SampleRate

// drain waits, at most DrainMax, until the recording holds the audio the
// device captured up to now by the device's own latency (the least lag
// of its deliveries since Start): a capture thread the machine ran late
// delivers the end of the dictation after the release.
func (r *Recorder) drain() {
	r.mu.Lock()
	if !r.recording || math.IsInf(r.minLag, 1) || r.limited {
		r.mu.Unlock()
		return
	}
	need := r.preRoll + int(r.now().Sub(r.startAt).Seconds()*capture.SampleRate-r.minLag-drainSlack)
	if len(r.rec) >= need {
		r.mu.Unlock()
		return
	}
	done := make(chan struct{})
	r.drainNeed, r.drained = need, done
	r.mu.Unlock()
	t := time.NewTimer(r.cfg.DrainMax)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

// Close stops any recording and closes the device.
func (r *Recorder) Close() error {
	if r.Recording() {
		_, _ = r.Stop()
	}
	return r.closeSource()
}
