package channels

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/engine/whisper/mel"
	"github.com/harkapp/hark/internal/speakers"
)

// Gated is one channel of a two-channel recording (a meeting's) as a
// meeting's live transcript's gate lets it through (speech with its
// pre-roll and hang, the other channel's echo held back), concatenated, as
// a 16 kHz mono audio.Stream. The final pass transcribes it: no decoding
// of silence (where a model makes words up, and which costs as much as
// speech) nor of the call twice; Timeline puts its words back on the
// recording's timeline. It reads the recording a chunk at a time, so
// memory stays flat however long the meeting.
//
// Both channels of a recording may be read from its one decode
// (openGatedPair), each by its own goroutine: a reader that gets more
// than maxAhead ahead of the other waits for it.
type Gated struct {
	r      *gatedRecording
	ch     int
	out    []float32 // let through, not yet read
	closed bool
}

// gatedRecording is a recording decoded once, both channels gated in
// step; its channels' readers take turns under mu.
type gatedRecording struct {
	mu   sync.Mutex
	turn *sync.Cond                   // a reader waits here while the other lags
	src  [speakers.Count]audio.Stream // each channel at 16 kHz, read in step
	x    [speakers.Count][]float32
	g    [speakers.Count]*Gate
	ch   [speakers.Count]*Gated
	pos  int64 // timeline samples gated
	done bool
	err  error // sticky: the reading's end for both channels

	ctx   context.Context // ends the reading
	limit time.Duration   // the longest recording read (0: any)
}

// maxAhead is the most audio let through that a channel holds for a
// reader lagging the other's (10 s; a test lowers it): memory stays flat,
// and a reader that never reads (nor closes) holds the other up rather
// than filling memory.
var maxAhead = 10 * rate16k

// OpenGated opens channel ch (0 or 1) of the recording at path, gated as
// cfg says (zero: as a meeting's live transcript is by default).
func OpenGated(path string, ch int, cfg GateConfig) (*Gated, error) {
	return openGated(context.Background(), path, ch, cfg, 0)
}

// openGated is OpenGated whose reads end with ctx, and fail with a
// *mel.TooLongError once past limit (> 0) of the recording.
func openGated(ctx context.Context, path string, ch int, cfg GateConfig, limit time.Duration) (*Gated, error) {
	if ch < 0 || ch >= speakers.Count {
		return nil, fmt.Errorf("channels: no channel %d", ch)
	}
	gs, err := openGatedPair(ctx, path, cfg, limit)
	if err != nil {
		return nil, err
	}
	gs[1-ch].Close() // only ch is read: the other keeps nothing
	return gs[ch], nil
}

// openGatedPair opens both channels of the recording at path from one
// decode, as openGated does one; read them at once (a goroutine each),
// or close the one not read.
func openGatedPair(ctx context.Context, path string, cfg GateConfig, limit time.Duration) ([speakers.Count]*Gated, error) {
	var gs [speakers.Count]*Gated
	src, err := openAudio(path)
	if err != nil {
		return gs, err
	}
	if n := src.Channels(); n != speakers.Count {
		src.Close()
		return gs, &ChannelCountError{Named: speakers.Count, Has: n}
	}
	// One decode for both channels, read in step.
	chs := audio.Split(src)
	r := &gatedRecording{ctx: ctx, limit: limit}
	r.turn = sync.NewCond(&r.mu)
	for i := range r.src {
		c, err := audio.To16kMono(chs[i])
		if err != nil {
			src.Close()
			return gs, fmt.Errorf("audio: %s: %w", path, err)
		}
		r.src[i], r.x[i] = c, make([]float32, Chunk)
		r.g[i] = NewGate(cfg)
		r.ch[i] = &Gated{r: r, ch: i}
	}
	return r.ch, nil
}

// openAudio decodes a recording (a test counts its decodes).
var openAudio = audio.Open

// SampleRate is 16 kHz.
func (s *Gated) SampleRate() int { return rate16k }

// Channels is 1.
func (s *Gated) Channels() int { return 1 }

// Format names the recording's format.
func (s *Gated) Format() string { return s.r.src[0].Format() + ", gated" }

// Close ends this channel's reading; the recording closes with its last
// channel (Timeline still works).
func (s *Gated) Close() error {
	r := s.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed, s.out = true, nil
	r.turn.Broadcast() // the other reader no longer waits for this one
	for _, c := range r.ch {
		if !c.closed {
			return nil
		}
	}
	var err error
	for _, src := range r.src {
		err = errors.Join(err, src.Close())
	}
	return err
}

// Read gives the next audio let through.
func (s *Gated) Read(p []float32) (int, error) {
	r := s.r
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(s.out) == 0 {
		switch o := r.ch[1-s.ch]; {
		case s.closed:
			return 0, os.ErrClosed
		case r.err != nil:
			return 0, r.err
		case r.done:
			return 0, io.EOF
		case !o.closed && len(o.out) > maxAhead:
			r.turn.Wait() // the other reader lags: it wakes this one
		default:
			r.next()
		}
	}
	n := copy(p, s.out)
	s.out = s.out[:copy(s.out, s.out[n:])]
	r.turn.Broadcast()
	return n, nil
}

// next gates the recording's next chunk into each open channel (a
// channel that ends first is silent after its end).
func (r *gatedRecording) next() {
	if err := r.ctx.Err(); err != nil {
		r.err = err
		return
	}
	if r.limit > 0 && r.pos > int64(r.limit.Seconds()*rate16k) {
		r.err = &mel.TooLongError{Limit: r.limit}
		return
	}
	n := 0
	for i, src := range r.src {
		k, err := readFull(src, r.x[i])
		if err != nil {
			r.err = err
			return
		}
		clear(r.x[i][k:])
		n = max(n, k)
	}
	if n < Chunk {
		r.done = true
	}
	if n == 0 {
		return
	}
	for i, g := range r.g {
		g.Hear(r.x[i][:n])
	}
	for i, c := range r.ch {
		if !c.closed {
			c.out = r.g[i].Pass(c.out, r.g[1-i], r.x[i][:n], r.pos)
		}
	}
	r.pos += int64(n)
}

// Timeline maps a time in the audio read (seconds) to the recording's.
func (s *Gated) Timeline(t float64) float64 {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	return s.r.g[s.ch].Timeline(t)
}

// Duration is the length of the recording read so far (seconds): all of
// it once Read has returned io.EOF.
func (s *Gated) Duration() float64 {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	return float64(s.r.pos) / rate16k
}

// Skipped is the speech held back as the other channel's echo (seconds).
func (s *Gated) Skipped() float64 {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	return s.r.g[s.ch].Skipped()
}

// readFull reads until p is full or the stream ends (then with the
// frames read and no error).
func readFull(s audio.Stream, p []float32) (int, error) {
	n := 0
	for n < len(p) {
		k, err := audio.ReadSome(s, p[n:])
		n += k
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
