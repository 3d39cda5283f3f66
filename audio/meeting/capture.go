package meeting

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/harkapp/hark/audio/capture"
)

// Source is an open capture device (capture.Stream in the app).
type Source interface {
	Start() error
	Stop() error
	Close() error
}

// Opener opens a capture device that delivers to o.OnData.
type Opener func(o capture.Options) (Source, error)

// OpenDevice opens an audio/capture device: the default Opener.
func OpenDevice(o capture.Options) (Source, error) {
	s, err := capture.Open(o)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// CaptureConfig configures a two-channel capture.
type CaptureConfig struct {
	// MicID is the microphone ("" = the default input).
	MicID string
	// MonitorID is the system audio source ("" = the default output's
	// monitor, capture.DefaultMonitor).
	MonitorID string
	// OnFrames receives the aligned frames, interleaved {You, Others},
	// about every FrameEvery, from one goroutine (blocking here delays
	// only the consumer; the audio threads never wait).
	OnFrames func(frames []float32)
	// OnEvent is told about lost and reopened devices on a channel.
	OnEvent func(ch int, e capture.Event)
	// FrameEvery is how often frames are handed on (default 100 ms).
	FrameEvery time.Duration
	// Align tunes the clock alignment.
	Align AlignConfig
	// Open opens a device (default audio/capture).
	Open Opener
	// Now is the clock (default time.Now; tests drive their own).
	Now func() time.Time
}

// Capture records the microphone and the system audio as two channels on
// one clock.
type Capture struct {
	cfg  CaptureConfig
	mu   sync.Mutex // guards al and stopped
	al   *Aligner
	srcs [Channels]Source
	quit chan struct{}
	done chan struct{}
	out  []float32
	stop sync.Once
}

// StartCapture opens and starts both devices.
func StartCapture(cfg CaptureConfig) (*Capture, error) {
	if cfg.OnFrames == nil {
		return nil, errors.New("meeting: CaptureConfig.OnFrames is required")
	}
	if cfg.FrameEvery <= 0 {
		cfg.FrameEvery = 100 * time.Millisecond
	}
	if cfg.Open == nil {
		cfg.Open = OpenDevice
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MonitorID == "" {
		d, err := capture.DefaultMonitor()
		if err != nil {
			return nil, err
		}
		cfg.MonitorID = d.ID
	}
	c := &Capture{cfg: cfg, quit: make(chan struct{}), done: make(chan struct{})}
	ids := [Channels]string{You: cfg.MicID, Others: cfg.MonitorID}
	for ch := range Channels {
		src, err := cfg.Open(capture.Options{DeviceID: ids[ch], OnData: c.onData(ch), OnEvent: c.onEvent(ch)})
		if err != nil {
			c.close()
			return nil, fmt.Errorf("meeting: opening the %s channel: %w", Names[ch], err)
		}
		c.srcs[ch] = src
	}
	c.al = NewAligner(cfg.Now(), cfg.Align) // before Start: no callback runs yet
	for ch, src := range c.srcs {
		if err := src.Start(); err != nil {
			c.close()
			return nil, fmt.Errorf("meeting: starting the %s channel: %w", Names[ch], err)
		}
	}
	go c.deliver()
	return c, nil
}

func (c *Capture) onData(ch int) func([]float32) {
	return func(x []float32) {
		now := c.cfg.Now()
		c.mu.Lock()
		c.al.Push(ch, x, now)
		c.mu.Unlock()
	}
}

func (c *Capture) onEvent(ch int) func(capture.Event) {
	return func(e capture.Event) {
		if c.cfg.OnEvent != nil {
			c.cfg.OnEvent(ch, e)
		}
	}
}

// deliver hands the aligned frames on every FrameEvery.
func (c *Capture) deliver() {
	defer close(c.done)
	tick := time.NewTicker(c.cfg.FrameEvery)
	defer tick.Stop()
	for {
		select {
		case <-c.quit:
			return
		case <-tick.C:
			c.handOn(false)
		}
	}
}

func (c *Capture) handOn(flush bool) {
	c.mu.Lock()
	if flush {
		c.out = c.al.Flush(c.out[:0])
	} else {
		c.out = c.al.Frames(c.out[:0])
	}
	c.mu.Unlock()
	if len(c.out) > 0 {
		c.cfg.OnFrames(c.out)
	}
}

// Stats reports each channel's clock corrections so far.
func (c *Capture) Stats() [Channels]TrackStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.al.Stats()
}

// Stop stops both devices, hands on the last frames and closes (once:
// later calls do nothing).
func (c *Capture) Stop() error {
	var err error
	c.stop.Do(func() {
		err = c.close()
		close(c.quit)
		<-c.done
		c.handOn(true)
	})
	return err
}

func (c *Capture) close() error {
	var errs []error
	for i, s := range c.srcs {
		if s == nil {
			continue
		}
		errs = append(errs, s.Stop(), s.Close())
		c.srcs[i] = nil
	}
	return errors.Join(errs...)
}
