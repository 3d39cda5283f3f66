package app

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/harkapp/hark/app/dictation"
	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/audio/capture"
	"github.com/harkapp/hark/audio/vad"
	"github.com/harkapp/hark/engine/whisper"
)

// CaptureRecorder is the Recorder over app/dictation's capture pipeline:
// an input device opened at Start (or kept open, with a pre-roll ring,
// when the microphone is kept ready: app/micpolicy.go), every sample
// written to the item's WAV as it arrives, the level meter, VAD auto-stop
// in toggle mode, and VAD trimming at Stop.
type CaptureRecorder struct {
	open dictation.Opener
	mic  micPolicy // when the device closes (app/micpolicy.go)
	// hooks are the recording's device callbacks (onEvent).
	hooks atomic.Pointer[deviceHooks]

	// ops serializes the device's life (Arm, Start, Stop, Close, the mic
	// policy) and guards rec, device and mic. It may be held while the
	// Recorder waits on its writer, so the writer's callbacks (onLevel,
	// onSamples, OnSaveError) never take it: they take only mu, which is
	// never held across a wait.
	ops    sync.Mutex
	rec    *dictation.Recorder
	device string

	mu    sync.Mutex
	opt   RecordOptions // callbacks of the current recording
	det   *vad.Detector
	fired bool

	// Live preview: each recording is streamed (app/stream.go) as it is
	// captured; Stop finishes the stream and keeps its transcript for
	// Streamed.
	live     func() *liveStream
	stream   *liveStream
	streamed *whisper.Result

	// createFile opens recordings' files (nil: audio.CreateFile;
	// tests inject a failing one).
	createFile func(string) (audio.WAVFile, error)
	// startTimeout bounds the device's start (0: the Recorder's default;
	// tests shorten it).
	startTimeout time.Duration
}

// SetLive installs the live-stream starter (nil: no live preview).
func (c *CaptureRecorder) SetLive(start func() *liveStream) {
	c.mu.Lock()
	c.live = start
	c.mu.Unlock()
}

// Streamed returns the last recording's streamed transcript (nil when it
// was not streamed) and forgets it.
func (c *CaptureRecorder) Streamed() *whisper.Result {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.streamed
	c.streamed = nil
	return r
}

// NewCaptureRecorder makes a Recorder on the microphone (open nil) or on
// another source (tests).
func NewCaptureRecorder(open dictation.Opener) *CaptureRecorder {
	return &CaptureRecorder{open: open}
}

// Arm opens the device ("" = default) now and keeps it capturing into the
// pre-roll ring, so the next dictation starts at once and includes the
// moment before the hotkey ("Keep the microphone ready"). Without it the
// device opens at Start.
func (c *CaptureRecorder) Arm(device string) error {
	c.ops.Lock()
	defer c.ops.Unlock()
	c.mic.cancelClose()
	if err := c.recorderLocked(device); err != nil {
		return err
	}
	return c.rec.Arm()
}

// recorderLocked makes c.rec the recorder for device, closing one on
// another device. It opens nothing: Arm or Start does. Called with c.ops
// held.
func (c *CaptureRecorder) recorderLocked(device string) error {
	if c.rec != nil && c.device == device {
		return nil
	}
	if c.rec != nil {
		if c.rec.Recording() {
			return errors.New("the input device cannot change during a recording")
		}
		c.rec.Close()
		c.rec = nil
	}
	rec := dictation.NewRecorder(dictation.RecorderConfig{
		DeviceID:  device,
		OnLevel:   c.onLevel,
		OnSamples: c.onSamples,
		OnEvent:   c.onEvent,
		OnSaveError: func(err error) {
			c.mu.Lock()
			f := c.opt.OnSaveError
			c.mu.Unlock()
			if f != nil {
				f(err)
			}
		},
		CreateFile:   c.createFile,
		StartTimeout: c.startTimeout,
	}, c.open)
	c.rec, c.device = rec, device
	return nil
}

func (c *CaptureRecorder) onLevel(l dictation.Level) {
	c.mu.Lock()
	f := c.opt.OnLevel
	c.mu.Unlock()
	if f != nil {
		f(l.RMS, l.Peak)
	}
}

// onSamples follows the recording with the VAD for toggle-mode auto-stop.
func (c *CaptureRecorder) onSamples(x []float32) {
	c.mu.Lock()
	if c.stream != nil {
		c.stream.feed(x)
	}
	fire := false
	if c.det != nil && !c.fired && c.opt.AutoStop > 0 {
		c.det.Write(x)
		if c.det.EndOfSpeech(c.opt.AutoStop) {
			c.fired, fire = true, true
		}
	}
	f := c.opt.OnAutoStop
	c.mu.Unlock()
	if fire && f != nil {
		go f()
	}
}

// Start implements Recorder.
func (c *CaptureRecorder) Start(opt RecordOptions) error {
	c.ops.Lock()
	defer c.ops.Unlock()
	c.mic.cancelClose()
	if opt.Device == "" && c.rec != nil && c.rec.Device() != (capture.Device{}) {
		// An open device that is no longer the default (a headset was
		// plugged in while it lingered) is closed: this dictation opens
		// the new default.
		if d, ok := c.mic.defaultDevice(); ok && d.ID != c.rec.Device().ID {
			c.rec.Close()
			c.rec = nil
		}
	}
	if err := c.recorderLocked(opt.Device); err != nil {
		return err
	}
	c.mu.Lock()
	c.opt, c.det, c.fired = opt, vad.NewDetector(vad.Config{}), false
	c.streamed = nil
	if c.live != nil && opt.OnPartial != nil {
		// OnPartial only asks for a preview: the stream's events (committed
		// and tentative text apart) go out from the App (app/stream.go).
		// It exists before the recording, so the pre-roll reaches it.
		c.stream = c.live()
	}
	c.mu.Unlock()
	c.hooks.Store(&deviceHooks{onDevice: opt.OnDevice, onNoDevice: opt.OnNoDevice})
	// Unarmed, Start opens the device and keeps every sample from the
	// moment it opens; Arm then keeps it open after Stop until the policy
	// closes it.
	if err := c.rec.Start(opt.Path); err != nil {
		c.forget()
		return deviceError(err)
	}
	if err := c.rec.Arm(); err != nil {
		// Not reached in practice (Start left the device running); a
		// recording must not outlive a failed Start.
		_, _ = c.rec.Stop() // Arm's error is the one to report
		c.forget()
		return deviceError(err)
	}
	return nil
}

// forget drops a failed recording's callbacks and live stream.
func (c *CaptureRecorder) forget() {
	c.mu.Lock()
	c.opt, c.det = RecordOptions{}, nil
	stream := c.stream
	c.stream = nil
	c.mu.Unlock()
	c.hooks.Store(nil)
	if stream != nil {
		stream.abort()
	}
}

// deviceError says a device failure in the user's words; the cause stays
// in the chain.
func deviceError(err error) error {
	if errors.Is(err, dictation.ErrDeviceSlow) {
		return fmt.Errorf("the microphone did not start; try again, or pick another input in Settings: %w", err)
	}
	if errors.Is(err, capture.ErrNoDevice) {
		return fmt.Errorf("no microphone was found; connect one or check the sound settings: %w", err)
	}
	if errors.Is(err, dictation.ErrRecordingFile) {
		return err
	}
	return fmt.Errorf("the microphone could not be opened: %w", err)
}

// Stop implements Recorder: the WAV keeps everything captured; the samples
// to transcribe are trimmed of leading and trailing silence.
func (c *CaptureRecorder) Stop() (Recording, error) {
	return c.stop(false)
}

// Abort ends the recording for a cancel: the live stream is canceled, not
// finished (no decode of its tail), and the samples are not trimmed; the
// WAV keeps everything captured, and Samples is all of it.
func (c *CaptureRecorder) Abort() (Recording, error) {
	return c.stop(true)
}

func (c *CaptureRecorder) stop(abort bool) (Recording, error) {
	c.ops.Lock()
	rec := c.rec
	c.mu.Lock()
	opt := c.opt
	c.mu.Unlock()
	if rec == nil {
		c.ops.Unlock()
		c.forget()
		return Recording{}, errors.New("not recording")
	}
	r, err := rec.Stop() // the last samples reach the stream first
	c.mu.Lock()
	c.opt, c.det = RecordOptions{}, nil
	c.mu.Unlock()
	c.hooks.Store(nil)
	c.mic.afterRecording(c, rec, opt.Mic)
	c.ops.Unlock()
	c.mu.Lock()
	stream := c.stream
	c.stream = nil
	c.mu.Unlock()
	if stream != nil && abort {
		stream.abort()
	} else if stream != nil {
		// Only the uncommitted tail is decoded; a stream that failed or
		// never got the model leaves the text to one transcription.
		if res, err := stream.finish(); err == nil {
			c.mu.Lock()
			c.streamed = res
			c.mu.Unlock()
		}
	}
	if r == nil {
		if err == nil {
			err = errors.New("no recording")
		}
		return Recording{}, err
	}
	out := Recording{DurationMs: r.Duration.Milliseconds(), SaveErr: r.SaveErr, PreRollMs: r.PreRoll.Milliseconds()}
	if err != nil {
		return out, err
	}
	if len(r.Samples) == 0 && !abort {
		return out, errors.New("the microphone delivered no audio; check the input device in Settings (the recording is kept in History)")
	}
	if abort {
		out.Samples = r.Samples
		return out, nil
	}
	start, end, err := vad.Trim(r.Samples, vad.Config{})
	if err != nil {
		if errors.Is(err, vad.ErrNoSpeech) {
			return out, errors.New("no speech was heard (the recording is kept in History)")
		}
		return out, err
	}
	out.Samples = r.Samples[start:end]
	return out, nil
}

// Devices implements Recorder.
func (c *CaptureRecorder) Devices() ([]Device, error) {
	ds, err := capture.Devices()
	if err != nil {
		return []Device{}, err
	}
	out := make([]Device, len(ds))
	for i, d := range ds {
		out[i] = Device{ID: d.ID, Name: d.Name, Default: d.Default}
	}
	return out, nil
}

// Close closes the device.
func (c *CaptureRecorder) Close() error {
	c.ops.Lock()
	defer c.ops.Unlock()
	c.mic.cancelClose()
	if c.rec == nil {
		return nil
	}
	err := c.rec.Close()
	c.rec = nil
	return err
}
