package channels

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/engine/whisper/mel"
	"github.com/harkapp/hark/internal/speakers"
)

// Gated is one channel of a two-channel recording (a meeting's) as a
// meeting's live transcript's gate lets it through (speech with its
// pre-roll and hang, the other channel's echo held back), concatenated, as
// a 16 kHz mono audio.Stream.
// The final pass transcribes it: no decoding of silence (where a model
// makes words up, and which costs as much as speech) nor of the call twice;
// Timeline puts its words back on the recording's timeline. It reads the
// recording a chunk at a time, so memory stays flat however long the
// meeting.
type Gated struct {
	src  [speakers.Count]audio.Stream // each channel at 16 kHz, read in step
	x    [speakers.Count][]float32
	g    [speakers.Count]*Gate
	ch   int
	pos  int64     // timeline samples gated
	out  []float32 // let through, not yet read
	done bool

	ctx   context.Context // ends the reading
	limit time.Duration   // the longest recording read (0: any)
}

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
	src, err := openAudio(path)
	if err != nil {
		return nil, err
	}
	if n := src.Channels(); n != speakers.Count {
		src.Close()
		return nil, &ChannelCountError{Named: speakers.Count, Has: n}
	}
	// One decode for both channels, read in step below.
	chs := audio.Split(src)
	s := &Gated{ch: ch, ctx: ctx, limit: limit}
	for i := range s.src {
		c, err := audio.To16kMono(chs[i])
		if err != nil {
			src.Close()
			return nil, fmt.Errorf("audio: %s: %w", path, err)
		}
		s.src[i], s.x[i] = c, make([]float32, Chunk)
		s.g[i] = NewGate(cfg)
	}
	return s, nil
}

// openAudio decodes a recording (a test counts its decodes).
var openAudio = audio.Open

// SampleRate is 16 kHz.
func (s *Gated) SampleRate() int { return rate16k }

// Channels is 1.
func (s *Gated) Channels() int { return 1 }

// Format names the recording's format.
func (s *Gated) Format() string { return s.src[0].Format() + ", gated" }

// Close closes the recording (Timeline still works).
func (s *Gated) Close() error {
	var err error
	for _, src := range s.src {
		if src != nil {
			err = errors.Join(err, src.Close())
		}
	}
	return err
}

// Read gives the next audio let through.
func (s *Gated) Read(p []float32) (int, error) {
	for len(s.out) == 0 {
		if s.done {
			return 0, io.EOF
		}
		if err := s.next(); err != nil {
			return 0, err
		}
	}
	n := copy(p, s.out)
	s.out = s.out[:copy(s.out, s.out[n:])]
	return n, nil
}

// next gates the recording's next chunk (a channel that ends first is
// silent after its end).
func (s *Gated) next() error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	if s.limit > 0 && s.pos > int64(s.limit.Seconds()*rate16k) {
		return &mel.TooLongError{Limit: s.limit}
	}
	n := 0
	for i, src := range s.src {
		k, err := readFull(src, s.x[i])
		if err != nil {
			return err
		}
		clear(s.x[i][k:])
		n = max(n, k)
	}
	if n < Chunk {
		s.done = true
	}
	if n == 0 {
		return nil
	}
	for i, g := range s.g {
		g.Hear(s.x[i][:n])
	}
	s.out = s.g[s.ch].Pass(s.out, s.g[1-s.ch], s.x[s.ch][:n], s.pos)
	s.pos += int64(n)
	return nil
}

// Timeline maps a time in the audio read (seconds) to the recording's.
func (s *Gated) Timeline(t float64) float64 { return s.g[s.ch].Timeline(t) }

// Duration is the length of the recording read so far (seconds): all of
// it once Read has returned io.EOF.
func (s *Gated) Duration() float64 { return float64(s.pos) / rate16k }

// Skipped is the speech held back as the other channel's echo (seconds).
func (s *Gated) Skipped() float64 { return s.g[s.ch].Skipped() }

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
