package audio

import (
	"errors"
	"fmt"
)

// WhisperRate is the sample rate Whisper models take.
const WhisperRate = 16000

// monoStream averages the channels of its source (what ffmpeg's -ac 1 does
// for stereo once normalised: (L+R)/2).
type monoStream struct {
	src  Stream
	ch   int
	pick int // the channel kept (Channel); -1 averages them all (Mono)
	buf  []float32
}

// Mono downmixes a stream to one channel by averaging; a mono stream is
// returned as is.
func Mono(src Stream) Stream {
	if src.Channels() == 1 {
		return src
	}
	return &monoStream{src: src, ch: src.Channels(), pick: -1}
}

// Channel keeps channel i (from 0) of a stream, as one mono stream: a
// meeting's two-channel file holds the microphone and the system audio.
func Channel(src Stream, i int) (Stream, error) {
	if i < 0 || i >= src.Channels() {
		return nil, fmt.Errorf("audio: no channel %d in a %d-channel %s stream", i+1, src.Channels(), src.Format())
	}
	return &monoStream{src: src, ch: src.Channels(), pick: i}, nil
}

func (s *monoStream) SampleRate() int { return s.src.SampleRate() }
func (s *monoStream) Channels() int   { return 1 }
func (s *monoStream) Format() string  { return s.src.Format() }
func (s *monoStream) Close() error    { return s.src.Close() }

func (s *monoStream) Read(p []float32) (int, error) {
	if len(p) == 0 {
		return 0, errors.New("audio: Read buffer smaller than one frame")
	}
	frames := min(len(p), 8192)
	if cap(s.buf) < frames*s.ch {
		s.buf = make([]float32, frames*s.ch)
	}
	n, err := s.src.Read(s.buf[:frames*s.ch])
	inv := 1 / float32(s.ch)
	for i := range n {
		if s.pick >= 0 {
			p[i] = s.buf[i*s.ch+s.pick]
			continue
		}
		var sum float32
		for _, v := range s.buf[i*s.ch : (i+1)*s.ch] {
			sum += v
		}
		p[i] = sum * inv
	}
	return n, err
}

// To16kMono converts any stream to 16 kHz mono: downmix, then resample.
// A 16 kHz mono stream passes through untouched (bit-exact).
func To16kMono(src Stream) (Stream, error) {
	m := Mono(src)
	if m.SampleRate() == WhisperRate {
		return m, nil
	}
	return Resample(m, WhisperRate)
}

// Open16k opens a file as a 16 kHz mono stream.
func Open16k(path string) (Stream, error) {
	s, err := Open(path)
	if err != nil {
		return nil, err
	}
	c, err := To16kMono(s)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("audio: %s: %w", path, err)
	}
	return c, nil
}

// Load16k decodes a whole file to 16 kHz mono samples, the input Whisper's
// log-mel takes. For a 16 kHz mono 16-bit WAV the samples are exactly
// int16/32768, as openai-whisper's load_audio returns them.
func Load16k(path string) ([]float32, error) {
	s, err := Open16k(path)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	x, err := ReadAll(s)
	if err != nil {
		return nil, fmt.Errorf("audio: %s: %w", path, err)
	}
	if len(x) == 0 {
		return nil, fmt.Errorf("audio: %s: %w", path, ErrNoAudio)
	}
	return x, nil
}

// LoadChannels16k decodes every channel of a file separately to 16 kHz
// (the file is read once a channel, so only the samples kept are held).
func LoadChannels16k(path string) ([][]float32, error) {
	s, err := Open(path)
	if err != nil {
		return nil, err
	}
	n := s.Channels()
	s.Close()
	out := make([][]float32, n)
	for i := range out {
		if out[i], err = loadChannel16k(path, i); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func loadChannel16k(path string, i int) ([]float32, error) {
	c, err := OpenChannel16k(path, i)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return ReadAll(c)
}

// OpenChannel16k opens channel i (from 0) of a file as a 16 kHz stream.
func OpenChannel16k(path string, i int) (Stream, error) {
	s, err := Open(path)
	if err != nil {
		return nil, err
	}
	c, err := Channel(s, i)
	if err == nil {
		c, err = To16kMono(c)
	}
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("audio: %s: %w", path, err)
	}
	return c, nil
}
