//go:build cgo

package capture

// #include <stdlib.h>
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gen2brain/malgo"
)

// backends lists the real backends to try. miniaudio's default list ends
// with the null backend, which "records" silence without complaint; a
// dictation app must say there is no microphone instead.
func backends(null bool) []malgo.Backend {
	if null {
		// malgo v0.11.24 numbers BackendNull as miniaudio's custom
		// backend; the null backend is the next value.
		return []malgo.Backend{malgo.Backend(malgo.BackendNull + 1)}
	}
	if runtime.GOOS == "linux" {
		return []malgo.Backend{malgo.BackendPulseaudio, malgo.BackendAlsa, malgo.BackendJack}
	}
	return nil
}

func initContext(null bool) (*malgo.AllocatedContext, error) {
	ctx, err := malgo.InitContext(backends(null), malgo.ContextConfig{}, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoDevice, err)
	}
	return ctx, nil
}

// Devices lists the input devices.
func Devices() ([]Device, error) {
	ctx, err := initContext(false)
	if err != nil {
		return nil, err
	}
	defer func() { _ = ctx.Uninit(); ctx.Free() }()
	return listDevices(ctx)
}

func listDevices(ctx *malgo.AllocatedContext) ([]Device, error) {
	infos, err := ctx.Devices(malgo.Capture)
	if err != nil {
		return nil, fmt.Errorf("capture: listing devices: %w", err)
	}
	out := make([]Device, 0, len(infos))
	for i := range infos {
		out = append(out, Device{ID: infos[i].ID.String(), Name: infos[i].Name(), Default: infos[i].IsDefault != 0})
	}
	return out, nil
}

// Stream is an open capture device. Its methods are safe for concurrent use.
type Stream struct {
	opt Options

	mu      sync.Mutex // guards ctx, dev, cur, running, quit
	ctx     *malgo.AllocatedContext
	dev     *malgo.Device
	cur     Device
	running bool
	quit    chan struct{}
	done    chan struct{}

	stopping atomic.Bool  // a Stop we asked for: the stop callback is not a loss
	lastData atomic.Int64 // unix ns of the last data callback
	lost     chan struct{}
}

// defaults fills in the Options' documented defaults (only a backend
// that opens devices applies them).
func (o *Options) defaults() {
	if o.PeriodMs <= 0 {
		o.PeriodMs = 10
	}
	if o.StallTimeout <= 0 {
		o.StallTimeout = time.Second
	}
	if o.Backlog <= 0 {
		o.Backlog = 3 * time.Second
	}
}

// Open opens the device (not started: call Start).
func Open(opt Options) (*Stream, error) {
	if opt.OnData == nil {
		return nil, errors.New("capture: Options.OnData is required")
	}
	opt.defaults()
	ctx, err := initContext(opt.NullBackend)
	if err != nil {
		return nil, err
	}
	s := &Stream{opt: opt, ctx: ctx, lost: make(chan struct{}, 1)}
	id := opt.DeviceID
	if opt.NullBackend {
		id = ""
	}
	if err := s.openDevice(id, true); err != nil {
		_ = ctx.Uninit()
		ctx.Free()
		return nil, err
	}
	return s, nil
}

// openDevice initialises s.dev on the device with the given id ("" =
// default). strict fails when id is gone instead of using the default.
// Called with s.mu held (or before s is shared).
func (s *Stream) openDevice(id string, strict bool) error {
	infos, err := s.ctx.Devices(malgo.Capture)
	if err != nil {
		return fmt.Errorf("capture: listing devices: %w", err)
	}
	devs := make([]Device, len(infos))
	var pick *Device
	var rawID *malgo.DeviceID
	for i := range infos {
		devs[i] = Device{ID: infos[i].ID.String(), Name: infos[i].Name(), Default: infos[i].IsDefault != 0}
		if id != "" && devs[i].ID == id {
			pick, rawID = &devs[i], &infos[i].ID
		}
	}
	if id != "" && pick == nil && strict {
		return fmt.Errorf("capture: input device %q not found", id)
	}
	cfg := malgo.DefaultDeviceConfig(malgo.Capture)
	cfg.Capture.Format = malgo.FormatF32
	cfg.Capture.Channels = 1
	cfg.SampleRate = SampleRate
	cfg.PeriodSizeInMilliseconds = uint32(s.opt.PeriodMs)
	// The server's buffer is periods × period (miniaudio's default of 3
	// is 30 ms: any longer hold-up of this process lost audio, seen as
	// words missing from a meeting's channel on a loaded machine).
	cfg.Periods = uint32(max(3, s.opt.Backlog.Milliseconds()/int64(s.opt.PeriodMs)))
	if rawID != nil {
		p := rawID.Pointer() // C memory: a Go pointer may not sit in the C config
		defer C.free(p)
		cfg.Capture.DeviceID = p
	}
	dev, err := malgo.InitDevice(s.ctx.Context, cfg, malgo.DeviceCallbacks{Data: s.onData, Stop: s.onStop})
	if err != nil {
		return fmt.Errorf("capture: opening input device: %w", err)
	}
	s.dev = dev
	switch {
	case pick != nil:
		s.cur = *pick
	default:
		s.cur = Device{Name: "default", Default: true}
		for _, d := range devs {
			if d.Default {
				s.cur = d
			}
		}
	}
	return nil
}

func (s *Stream) onData(_, in []byte, _ uint32) {
	if len(in) < 4 {
		return
	}
	s.lastData.Store(time.Now().UnixNano())
	s.opt.OnData(unsafe.Slice((*float32)(unsafe.Pointer(&in[0])), len(in)/4))
}

func (s *Stream) onStop() {
	if s.stopping.Load() {
		return
	}
	select {
	case s.lost <- struct{}{}:
	default:
	}
}

// Device is the device being captured from (it changes when a lost device
// is replaced by the default).
func (s *Stream) Device() Device {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

// Start starts capturing; OnData runs from now until Stop.
func (s *Stream) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx == nil {
		return errors.New("capture: stream is closed")
	}
	if s.running {
		return nil
	}
	s.stopping.Store(false)
	s.lastData.Store(time.Now().UnixNano())
	if err := s.dev.Start(); err != nil {
		return fmt.Errorf("capture: starting input device: %w", err)
	}
	s.running = true
	s.quit, s.done = make(chan struct{}), make(chan struct{})
	go s.supervise(s.quit, s.done)
	return nil
}

// supervise reopens a device that stopped on its own or went quiet.
func (s *Stream) supervise(quit, done chan struct{}) {
	defer close(done)
	tick := time.NewTicker(s.opt.StallTimeout / 4)
	defer tick.Stop()
	for {
		select {
		case <-quit:
			return
		case <-s.lost:
		case <-tick.C:
			if time.Since(time.Unix(0, s.lastData.Load())) < s.opt.StallTimeout || s.present() {
				continue
			}
		}
		s.event(Event{Kind: EventLost, Device: s.Device()})
		for {
			err := s.reopen(quit)
			if err == nil {
				s.event(Event{Kind: EventReopened, Device: s.Device()})
				break
			}
			if errors.Is(err, errQuit) {
				return
			}
			s.event(Event{Kind: EventError, Err: err})
			select {
			case <-quit:
				return
			case <-time.After(500 * time.Millisecond):
			}
		}
	}
}

var errQuit = errors.New("stopped")

// present reports whether the quiet device is still the one to record
// from: listed, and still the default when we follow the default. A quiet
// device that is present is left alone (a sound server may simply deliver
// nothing while a source is idle); it is checked again a StallTimeout on.
func (s *Stream) present() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastData.Store(time.Now().UnixNano())
	infos, err := s.ctx.Devices(malgo.Capture)
	if err != nil {
		return false
	}
	for i := range infos {
		id := infos[i].ID.String()
		if s.opt.DeviceID == "" && infos[i].IsDefault != 0 {
			return id == s.cur.ID
		}
		if s.opt.DeviceID != "" && id == s.cur.ID {
			return true
		}
	}
	return false
}

// uninitTimeout bounds the wait for a lost device to close: miniaudio's
// PulseAudio backend can block for good closing a stream whose source
// vanished.
const uninitTimeout = 2 * time.Second

// release uninitialises the device; if that hangs, the device and its
// context are abandoned (leaked) and a fresh context is made.
func (s *Stream) release() error {
	dev := s.dev
	s.dev = nil
	if dev == nil {
		return nil
	}
	done := make(chan struct{})
	go func() { dev.Uninit(); close(done) }()
	select {
	case <-done:
		return nil
	case <-time.After(uninitTimeout):
	}
	ctx, err := initContext(s.opt.NullBackend)
	if err != nil {
		return err
	}
	s.ctx = ctx // the old one may be locked by the stuck Uninit
	return nil
}

func (s *Stream) reopen(quit chan struct{}) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-quit:
		return errQuit
	default:
	}
	s.stopping.Store(true)
	err := s.release()
	s.stopping.Store(false)
	if err != nil {
		return err
	}
	// Drain a loss signalled by the device just closed.
	select {
	case <-s.lost:
	default:
	}
	if err := s.openDevice(s.opt.DeviceID, false); err != nil {
		return err
	}
	s.lastData.Store(time.Now().UnixNano())
	if err := s.dev.Start(); err != nil {
		return fmt.Errorf("capture: restarting input device: %w", err)
	}
	return nil
}

func (s *Stream) event(e Event) {
	if s.opt.OnEvent != nil {
		s.opt.OnEvent(e)
	}
}

// Stop stops capturing; the device stays open for a quick restart.
func (s *Stream) Stop() error {
	s.mu.Lock()
	if !s.running {
		s.mu.Unlock()
		return nil
	}
	s.running = false
	quit, done := s.quit, s.done
	close(quit)
	s.mu.Unlock()
	<-done // the supervisor takes s.mu while reopening
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopping.Store(true)
	if s.dev == nil {
		return nil
	}
	if err := s.dev.Stop(); err != nil {
		return fmt.Errorf("capture: stopping input device: %w", err)
	}
	return nil
}

// Close stops and releases the device.
func (s *Stream) Close() error {
	err := s.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dev != nil {
		s.stopping.Store(true)
		s.dev.Uninit()
		s.dev = nil
	}
	if s.ctx != nil {
		_ = s.ctx.Uninit()
		s.ctx.Free()
		s.ctx = nil
	}
	return err
}
