package audio

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/jfreymuth/oggvorbis"
)

// vorbisStream decodes Ogg Vorbis with jfreymuth/oggvorbis, which yields
// interleaved float32 already.
type vorbisStream struct {
	f *os.File
	r *oggvorbis.Reader
}

func newVorbis(f *os.File) (*vorbisStream, error) {
	r, err := oggvorbis.NewReader(bufio.NewReaderSize(f, 64<<10))
	if err != nil {
		return nil, err
	}
	if r.Channels() <= 0 {
		return nil, errors.New("no channels")
	}
	if sr := r.SampleRate(); sr < minSampleRate || sr > maxSampleRate {
		return nil, fmt.Errorf("unsupported sample rate %d Hz", sr)
	}
	return &vorbisStream{f: f, r: r}, nil
}

func (s *vorbisStream) SampleRate() int { return s.r.SampleRate() }
func (s *vorbisStream) Channels() int   { return s.r.Channels() }
func (s *vorbisStream) Format() string  { return "vorbis" }
func (s *vorbisStream) Close() error    { return s.f.Close() }

func (s *vorbisStream) Read(p []float32) (int, error) {
	ch := s.r.Channels()
	p = p[:len(p)/ch*ch]
	if len(p) == 0 {
		return 0, errors.New("audio: Read buffer smaller than one frame")
	}
	// Bounded: a corrupt stream can make the decoder return nothing forever.
	for range maxEmptyReads {
		n, err := s.r.Read(p)
		if n > 0 {
			return n / ch, nil
		}
		if err == io.EOF {
			return 0, io.EOF
		}
		if err != nil {
			return 0, fmt.Errorf("vorbis: %w", err)
		}
	}
	return 0, errors.New("vorbis: decoder makes no progress (corrupt stream)")
}
