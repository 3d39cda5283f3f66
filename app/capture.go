package app

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/harkapp/hark/app/dictation"
	"github.com/harkapp/hark/audio/capture"
	"github.com/harkapp/hark/audio/vad"
)

// CaptureRecorder is the Recorder over app/dictation's capture pipeline:
// an input device kept open with a pre-roll ring (so the first word is
// never cut off), every sample written to the item's WAV as it arrives,
// the level meter, VAD auto-stop in toggle mode, and VAD trimming at Stop.
type CaptureRecorder struct {
	open dictation.Opener

	mu     sync.Mutex
	rec    *dictation.Recorder
	device string
	opt    RecordOptions // callbacks of the current recording
	det    *vad.Detector
	fired  bool

	// Live preview: the recording so far, transcribed about once a second
	// while it grows; canceled at Stop so the final transcription gets
	// the model within a token.
	partial func(ctx context.Context, samples []float32) (string, error)
	samples []float32
	cancel  context.CancelFunc
	preview sync.WaitGroup
}

// previewEvery is how often the live preview runs; a preview of a few
// seconds of audio takes a fraction of that with the small models.
const previewEvery = time.Second

// SetPartial installs the live-preview transcriber (nil: none).
func (c *CaptureRecorder) SetPartial(f func(ctx context.Context, samples []float32) (string, error)) {
	c.mu.Lock()
	c.partial = f
	c.mu.Unlock()
}

// previewLoop transcribes the recording so far whenever it has grown by
// most of a second, reporting the text through show.
func (c *CaptureRecorder) previewLoop(ctx context.Context, f func(context.Context, []float32) (string, error), show func(string)) {
	defer c.preview.Done()
	tick := time.NewTicker(previewEvery)
	defer tick.Stop()
	done := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		c.mu.Lock()
		n := len(c.samples)
		var snap []float32
		if n >= capture.SampleRate && n-done >= capture.SampleRate*4/5 {
			snap = append([]float32(nil), c.samples...)
		}
		c.mu.Unlock()
		if snap == nil {
			continue
		}
		done = n
		text, err := f(ctx, snap)
		if err == nil && ctx.Err() == nil && text != "" {
			show(text)
		}
	}
}

// NewCaptureRecorder makes a Recorder on the microphone (open nil) or on
// another source (tests).
func NewCaptureRecorder(open dictation.Opener) *CaptureRecorder {
	return &CaptureRecorder{open: open}
}

// Arm opens the device ("" = default) now and keeps it capturing into the
// pre-roll ring, so the first dictation starts at once and includes the
// moment before the hotkey. The desktop app arms at start-up; without it
// the device opens at the first Start.
func (c *CaptureRecorder) Arm(device string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.armLocked(device)
}

func (c *CaptureRecorder) armLocked(device string) error {
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
		DeviceID: device, Armed: true,
		OnLevel:   c.onLevel,
		OnSamples: c.onSamples,
	}, c.open)
	if err := rec.Arm(); err != nil {
		return err
	}
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
	if c.cancel != nil {
		c.samples = append(c.samples, x...)
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
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.armLocked(opt.Device); err != nil {
		return err
	}
	c.opt, c.det, c.fired = opt, vad.NewDetector(vad.Config{}), false
	if err := c.rec.Start(opt.Path); err != nil {
		return err
	}
	if c.partial != nil && opt.OnPartial != nil {
		ctx, cancel := context.WithCancel(context.Background())
		c.cancel, c.samples = cancel, c.samples[:0]
		c.preview.Add(1)
		go c.previewLoop(ctx, c.partial, opt.OnPartial)
	}
	return nil
}

// Stop implements Recorder: the WAV keeps everything captured; the samples
// to transcribe are trimmed of leading and trailing silence.
func (c *CaptureRecorder) Stop() (Recording, error) {
	c.mu.Lock()
	rec := c.rec
	c.opt, c.det = RecordOptions{}, nil
	if c.cancel != nil {
		c.cancel()
		c.cancel = nil
	}
	c.mu.Unlock()
	c.preview.Wait() // the model is free for the final transcription
	c.mu.Lock()
	c.samples = nil
	c.mu.Unlock()
	if rec == nil {
		return Recording{}, errors.New("not recording")
	}
	r, err := rec.Stop()
	if r == nil {
		if err == nil {
			err = errors.New("no recording")
		}
		return Recording{}, err
	}
	out := Recording{DurationMs: r.Duration.Milliseconds()}
	if err != nil {
		return out, err
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
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rec == nil {
		return nil
	}
	err := c.rec.Close()
	c.rec = nil
	return err
}
