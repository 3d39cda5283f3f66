// Package systemaudio records what the Mac plays, the meeting's "Others"
// channel, through a Core Audio process tap (macOS 14.2 and later): a
// global tap of every process's output goes into a private aggregate
// device, whose input the package reads. The tap's audio (float32 at the
// output device's rate, one or more channels) is mixed down to mono and
// resampled to 16 kHz (audio.Resample) off the audio thread, then handed
// on in periods as a capture device's would be (capture.Options).
//
// The darwin file talks to Core Audio through purego, so it builds and
// vets with GOOS=darwin CGO_ENABLED=0 anywhere; it has not yet run on a
// Mac. The mixing, the hand-over between the audio thread and the
// delivery, and the resampling are here and tested on every platform.
package systemaudio

import (
	"errors"
	"io"
	"sync"

	"github.com/harkapp/hark/audio"
)

// DeviceID names the system audio as a capture device: a meeting opens
// it as its Others channel (app/platform's meeting capture).
const DeviceID = "hark:system-audio"

// Rate is the rate handed on, Whisper's.
const Rate = 16000

// ErrUnsupported: process taps need macOS 14.2 or later.
var ErrUnsupported = errors.New("systemaudio: recording the system audio needs macOS 14.2 or later")

// pipe carries mono frames at the device rate from the audio thread
// (push, which never waits) to the delivery goroutine (Read, which does).
// Past max frames waiting the oldest are dropped: a stalled consumer
// costs audio, never the audio thread's time.
type pipe struct {
	rate, max int

	mu      sync.Mutex
	cond    *sync.Cond
	buf     []float32
	closed  bool
	dropped int64
}

func newPipe(rate, max int) *pipe {
	p := &pipe{rate: rate, max: max, buf: make([]float32, 0, max)}
	p.cond = sync.NewCond(&p.mu)
	return p
}

func (p *pipe) push(x []float32) {
	p.mu.Lock()
	p.buf = append(p.buf, x...)
	if over := len(p.buf) - p.max; over > 0 {
		p.buf = p.buf[:copy(p.buf, p.buf[over:])]
		p.dropped += int64(over)
	}
	p.mu.Unlock()
	p.cond.Signal()
}

// close ends the stream: Read returns what is left, then io.EOF.
func (p *pipe) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.cond.Broadcast()
}

func (p *pipe) SampleRate() int { return p.rate }
func (p *pipe) Channels() int   { return 1 }
func (p *pipe) Format() string  { return "core audio tap" }
func (p *pipe) Close() error    { p.close(); return nil }

func (p *pipe) Read(out []float32) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.buf) == 0 && !p.closed {
		p.cond.Wait()
	}
	if len(p.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(out, p.buf)
	p.buf = p.buf[:copy(p.buf, p.buf[n:])]
	return n, nil
}

// mixDown appends the mono mix of one callback's audio to dst: bufs holds
// either one interleaved buffer of channels channels, or one buffer a
// channel (channels 1).
func mixDown(dst []float32, bufs [][]float32, channels int) []float32 {
	if len(bufs) == 0 || channels < 1 {
		return dst
	}
	if len(bufs) == 1 {
		x := bufs[0]
		for i := 0; i+channels <= len(x); i += channels {
			var s float32
			for _, v := range x[i : i+channels] {
				s += v
			}
			dst = append(dst, s/float32(channels))
		}
		return dst
	}
	n := len(bufs[0])
	for _, b := range bufs[1:] {
		n = min(n, len(b))
	}
	for i := range n {
		var s float32
		for _, b := range bufs {
			s += b[i]
		}
		dst = append(dst, s/float32(len(bufs)))
	}
	return dst
}

// deliver resamples what comes through p to Rate and hands it on in
// periods of period samples until p is closed (the rest is handed on
// then).
func deliver(p *pipe, period int, onData func([]float32)) error {
	var src audio.Stream = p
	if p.rate != Rate {
		r, err := audio.Resample(p, Rate)
		if err != nil {
			return err
		}
		src = r
	}
	out := make([]float32, period)
	for {
		n, err := audio.ReadSome(src, out)
		if n > 0 {
			onData(out[:n])
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
