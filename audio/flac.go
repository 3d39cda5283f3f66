package audio

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/mewkiz/flac"
	"github.com/mewkiz/flac/frame"
)

// flacStream decodes FLAC frame by frame with mewkiz/flac, the frames of
// a batch on several cores where it can (flac_parallel.go).
type flacStream struct {
	f     *os.File
	s     *flac.Stream
	par   *flacFrames // nil: the serial decode
	scale float32
	ch    int
	pend  []float32 // interleaved samples of the current frame not yet read
}

func newFLAC(f *os.File) (*flacStream, error) {
	s, err := flac.New(f)
	if err != nil {
		return nil, err
	}
	info := s.Info
	if info.NChannels == 0 || info.BitsPerSample == 0 || info.BitsPerSample > 32 {
		return nil, fmt.Errorf("invalid stream info: %d channels, %d bits", info.NChannels, info.BitsPerSample)
	}
	if r := int(info.SampleRate); r < minSampleRate || r > maxSampleRate {
		return nil, fmt.Errorf("unsupported sample rate %d Hz", r)
	}
	scale, ch := float32(1/float64(uint64(1)<<(info.BitsPerSample-1))), int(info.NChannels)
	return &flacStream{f: f, s: s, par: newFLACFrames(f, flacWorkers(), ch, scale), scale: scale, ch: ch}, nil
}

func (s *flacStream) SampleRate() int { return int(s.s.Info.SampleRate) }
func (s *flacStream) Channels() int   { return s.ch }
func (s *flacStream) Format() string  { return "flac" }
func (s *flacStream) Close() error    { return s.f.Close() }

func (s *flacStream) Read(p []float32) (int, error) {
	if len(p) < s.ch {
		return 0, errors.New("audio: Read buffer smaller than one frame")
	}
	for len(s.pend) == 0 {
		fr, pcm, err := s.nextFrame()
		if err == io.EOF {
			return 0, io.EOF
		}
		if err != nil {
			return 0, fmt.Errorf("flac: %w", err)
		}
		if pcm != nil { // converted on a worker
			s.pend = pcm
			continue
		}
		if len(fr.Subframes) != s.ch {
			return 0, fmt.Errorf("flac: frame has %d channels, stream %d", len(fr.Subframes), s.ch)
		}
		n := int(fr.BlockSize)
		buf := s.pend[:0]
		if cap(buf) < n*s.ch {
			buf = make([]float32, 0, n*s.ch)
		}
		buf = buf[:n*s.ch]
		for c, sub := range fr.Subframes {
			if len(sub.Samples) < n {
				return 0, fmt.Errorf("flac: short subframe (%d of %d samples)", len(sub.Samples), n)
			}
			for i := range n {
				buf[i*s.ch+c] = float32(sub.Samples[i]) * s.scale
			}
		}
		s.pend = buf
	}
	n := min(len(p)/s.ch, len(s.pend)/s.ch)
	copy(p, s.pend[:n*s.ch])
	s.pend = s.pend[n*s.ch:]
	return n, nil
}

// nextFrame is the next frame, from the parallel decoder where there is
// one, with its converted samples where that decoder made them.
func (s *flacStream) nextFrame() (*frame.Frame, []float32, error) {
	if s.par != nil {
		return s.par.next()
	}
	fr, err := s.s.ParseNext()
	return fr, nil, err
}
