package audio

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/hajimehoshi/go-mp3"
)

// mp3Stream decodes MPEG-1/2/2.5 layer III with go-mp3, which always
// produces 16-bit stereo (a mono source comes out duplicated: the downmix
// gives the original back).
type mp3Stream struct {
	f    *os.File
	d    *mp3.Decoder
	buf  []byte
	done bool
	// Gapless trimming: frames still to drop, frames left to return (-1: all).
	skip, left int64
}

// readOnly hides io.Seeker so go-mp3 does not scan the whole file up front
// to compute its length.
type readOnly struct{ io.Reader }

func newMP3(f *os.File, start int64) (*mp3Stream, error) {
	skip, total := mp3Gapless(f, start)
	d, err := mp3.NewDecoder(readOnly{bufio.NewReaderSize(f, 64<<10)})
	if err != nil {
		return nil, err
	}
	if r := d.SampleRate(); r < minSampleRate || r > maxSampleRate {
		return nil, errors.New("invalid sample rate")
	}
	return &mp3Stream{f: f, d: d, skip: skip, left: total}, nil
}

func (s *mp3Stream) SampleRate() int { return s.d.SampleRate() }
func (s *mp3Stream) Channels() int   { return 2 }
func (s *mp3Stream) Format() string  { return "mp3" }
func (s *mp3Stream) Close() error    { return s.f.Close() }

func (s *mp3Stream) Read(p []float32) (int, error) {
	for s.skip > 0 && !s.done {
		tmp := make([]float32, 2*min(s.skip, 8192))
		n, err := s.read(tmp)
		s.skip -= int64(n)
		if err != nil {
			return 0, err
		}
	}
	if s.left == 0 {
		return 0, io.EOF
	}
	if s.left > 0 && int64(len(p)/2) > s.left {
		p = p[:2*s.left]
	}
	n, err := s.read(p)
	if s.left > 0 {
		s.left -= int64(n)
	}
	return n, err
}

func (s *mp3Stream) read(p []float32) (int, error) {
	if s.done {
		return 0, io.EOF
	}
	frames := min(len(p)/2, 8192)
	if frames == 0 {
		return 0, errors.New("audio: Read buffer smaller than one frame")
	}
	if cap(s.buf) < frames*4 {
		s.buf = make([]byte, frames*4)
	}
	b := s.buf[:frames*4]
	// ReadFull keeps reads frame-aligned: go-mp3 hands out bytes, not frames.
	n, err := io.ReadFull(s.d, b)
	switch err {
	case nil:
	case io.EOF:
		return 0, io.EOF
	case io.ErrUnexpectedEOF:
		s.done = true
	default:
		return 0, fmt.Errorf("mp3: %w", err)
	}
	frames = n / 4
	if frames == 0 {
		return 0, io.EOF
	}
	for i := range frames * 2 {
		p[i] = float32(int16(binary.LittleEndian.Uint16(b[2*i:]))) / 32768
	}
	return frames, nil
}
