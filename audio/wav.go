package audio

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// WAV is parsed here rather than with a library: go-audio/wav (the common
// one) decodes 32-bit data as integers only, has no 64-bit float and no
// WAVE_FORMAT_EXTENSIBLE sub-formats, and wants to buffer whole files. The
// format itself is a few well-specified chunks.

const (
	wavPCM        = 0x0001
	wavFloat      = 0x0003
	wavExtensible = 0xfffe

	minSampleRate = 1000
	maxSampleRate = 384_000
)

// extensibleGUIDTail is the fixed tail of KSDATAFORMAT_SUBTYPE_* GUIDs; the
// first two bytes hold the plain format tag.
var extensibleGUIDTail = []byte{0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xaa, 0x00, 0x38, 0x9b, 0x71}

// unsupportedWAVError marks a valid WAV whose codec this parser does not
// decode (Open hands such files to ffmpeg when it can).
type unsupportedWAVError struct{ what string }

func (e *unsupportedWAVError) Error() string {
	return "unsupported WAV encoding: " + e.what + " (install ffmpeg to decode it)"
}

type wavStream struct {
	f         *os.File
	r         *bufio.Reader
	rate      int
	channels  int
	float     bool
	bytesPer  int   // container bytes per sample
	remaining int64 // data bytes left; -1 when unknown (read to EOF)
	done      bool
	buf       []byte
}

func newWAV(f *os.File) (*wavStream, error) {
	r := bufio.NewReaderSize(f, 64<<10)
	var hdr [12]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, fmt.Errorf("truncated header: %w", err)
	}
	rf64 := string(hdr[:4]) == "RF64"
	riffSize := binary.LittleEndian.Uint32(hdr[4:])
	var ds64Data int64 = -1
	s := &wavStream{f: f, r: r}
	haveFmt := false
	for {
		var ch [8]byte
		if _, err := io.ReadFull(r, ch[:]); err != nil {
			if !haveFmt {
				return nil, errors.New("no fmt chunk")
			}
			return nil, errors.New("no data chunk")
		}
		id := string(ch[:4])
		size := int64(binary.LittleEndian.Uint32(ch[4:]))
		switch id {
		case "ds64":
			if size < 24 {
				return nil, errors.New("ds64 chunk too short")
			}
			var b [24]byte
			if _, err := io.ReadFull(r, b[:]); err != nil {
				return nil, fmt.Errorf("truncated ds64 chunk: %w", err)
			}
			ds64Data = int64(binary.LittleEndian.Uint64(b[8:]))
			if err := skip(r, size-24+size&1); err != nil {
				return nil, err
			}
		case "fmt ":
			if size < 16 || size > 1024 {
				return nil, fmt.Errorf("bad fmt chunk size %d", size)
			}
			b := make([]byte, size)
			if _, err := io.ReadFull(r, b); err != nil {
				return nil, fmt.Errorf("truncated fmt chunk: %w", err)
			}
			if err := s.parseFmt(b); err != nil {
				return nil, err
			}
			haveFmt = true
			if err := skip(r, size&1); err != nil {
				return nil, err
			}
		case "data":
			if !haveFmt {
				return nil, errors.New("data chunk before fmt chunk")
			}
			switch {
			case rf64 && size == 0xffffffff && ds64Data >= 0:
				s.remaining = ds64Data
			case size == 0xffffffff, size == 0 && (riffSize == 0 || riffSize == 0xffffffff):
				s.remaining = -1 // written by a streaming encoder: read to EOF
			default:
				s.remaining = size
			}
			return s, nil
		default:
			if err := skip(r, size+size&1); err != nil {
				return nil, fmt.Errorf("truncated %q chunk: %w", id, err)
			}
		}
	}
}

func skip(r *bufio.Reader, n int64) error {
	if n <= 0 {
		return nil
	}
	m, err := io.CopyN(io.Discard, r, n)
	if err == io.EOF && m < n {
		return io.ErrUnexpectedEOF
	}
	return err
}

func (s *wavStream) parseFmt(b []byte) error {
	tag := binary.LittleEndian.Uint16(b[0:])
	channels := int(binary.LittleEndian.Uint16(b[2:]))
	rate := int64(binary.LittleEndian.Uint32(b[4:]))
	blockAlign := int(binary.LittleEndian.Uint16(b[12:]))
	bits := int(binary.LittleEndian.Uint16(b[14:]))
	if tag == wavExtensible {
		if len(b) < 40 {
			return errors.New("WAVE_FORMAT_EXTENSIBLE fmt chunk too short")
		}
		guid := b[24:40]
		if string(guid[2:]) != string(extensibleGUIDTail) {
			return &unsupportedWAVError{what: fmt.Sprintf("extensible sub-format %x", guid)}
		}
		tag = binary.LittleEndian.Uint16(guid)
	}
	if channels == 0 {
		return errors.New("WAV has 0 channels")
	}
	if rate < minSampleRate || rate > maxSampleRate {
		return fmt.Errorf("unsupported sample rate %d Hz", rate)
	}
	if blockAlign == 0 || blockAlign%channels != 0 {
		return fmt.Errorf("bad block align %d for %d channels", blockAlign, channels)
	}
	bps := blockAlign / channels
	switch tag {
	case wavPCM:
		if bps < 1 || bps > 4 || bits < 1 || bits > 8*bps {
			return fmt.Errorf("unsupported PCM layout: %d bits in %d-byte samples", bits, bps)
		}
	case wavFloat:
		if (bps != 4 && bps != 8) || bits != 8*bps {
			return fmt.Errorf("unsupported float layout: %d bits in %d-byte samples", bits, bps)
		}
		s.float = true
	default:
		return &unsupportedWAVError{what: fmt.Sprintf("format tag 0x%04x%s", tag, wavTagName(tag))}
	}
	s.rate = int(rate)
	s.channels = channels
	s.bytesPer = bps
	return nil
}

func wavTagName(tag uint16) string {
	switch tag {
	case 0x0002:
		return " (MS ADPCM)"
	case 0x0006:
		return " (A-law)"
	case 0x0007:
		return " (mu-law)"
	case 0x0011:
		return " (IMA ADPCM)"
	case 0x0055:
		return " (MP3)"
	}
	return ""
}

func (s *wavStream) SampleRate() int { return s.rate }
func (s *wavStream) Channels() int   { return s.channels }
func (s *wavStream) Format() string  { return "wav" }
func (s *wavStream) Close() error    { return s.f.Close() }

func (s *wavStream) Read(p []float32) (int, error) {
	if s.done || s.remaining == 0 {
		return 0, io.EOF
	}
	block := s.channels * s.bytesPer
	frames := min(len(p)/s.channels, 8192)
	if frames == 0 {
		return 0, errors.New("audio: Read buffer smaller than one frame")
	}
	want := int64(frames * block)
	if s.remaining > 0 && s.remaining < want {
		want = s.remaining - s.remaining%int64(block)
		if want == 0 {
			s.done = true
			return 0, io.EOF
		}
	}
	if cap(s.buf) < int(want) {
		s.buf = make([]byte, want)
	}
	b := s.buf[:want]
	n, err := io.ReadFull(s.r, b)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		// A data chunk cut short (a truncated or still-recording file): keep
		// the whole frames that are there.
		s.done = true
	} else if err != nil {
		return 0, err
	}
	if s.remaining > 0 {
		s.remaining -= int64(n)
	}
	frames = n / block
	if frames == 0 {
		return 0, io.EOF
	}
	s.decode(p[:frames*s.channels], b[:frames*block])
	return frames, nil
}

// decode converts little-endian samples to float32: integers scale by their
// container's full range (so 16-bit data gives exactly int16/32768), 8-bit
// data is unsigned.
func (s *wavStream) decode(dst []float32, b []byte) {
	switch {
	case s.float && s.bytesPer == 4:
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
	case s.float:
		for i := range dst {
			dst[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:])))
		}
	case s.bytesPer == 1:
		for i := range dst {
			dst[i] = float32(int(b[i])-128) / 128
		}
	case s.bytesPer == 2:
		for i := range dst {
			dst[i] = float32(int16(binary.LittleEndian.Uint16(b[2*i:]))) / 32768
		}
	case s.bytesPer == 3:
		for i := range dst {
			v := int32(uint32(b[3*i])<<8|uint32(b[3*i+1])<<16|uint32(b[3*i+2])<<24) >> 8
			dst[i] = float32(v) / (1 << 23)
		}
	default:
		for i := range dst {
			dst[i] = float32(float64(int32(binary.LittleEndian.Uint32(b[4*i:]))) / (1 << 31))
		}
	}
}
