package audio

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// ffmpegAvailable reports whether an ffmpeg binary is on PATH.
func ffmpegAvailable() bool {
	_, err := exec.LookPath("ffmpeg")
	return err == nil
}

// ffmpegStream runs ffmpeg on a file and reads its 16 kHz mono float32
// output through a pipe, so nothing is buffered beyond the pipe. The
// conversion is the one openai-whisper's load_audio asks ffmpeg for (its
// default resampler), with f32le instead of s16le to keep full precision.
type ffmpegStream struct {
	cmd    *exec.Cmd
	out    io.ReadCloser
	r      *bufio.Reader
	stderr *tailBuffer
	name   string
	buf    []byte
	total  int64
	ended  bool
	err    error
}

// newFFmpeg decodes a file of a recognised kind with ffmpeg. The input is
// hostile: ffmpeg gets it as file:PATH with only the file protocol allowed
// and the demuxer pinned to the sniffed one, so no probing can turn it into
// a playlist (HLS, M3U) or concat list that reads other files or URLs.
func newFFmpeg(path string, k kind) (Stream, error) {
	what := k.name
	if k.demuxer == "" {
		if what == "" {
			what = "unrecognised format"
		}
		return nil, fmt.Errorf("%s: not a supported audio or video file (WAV, MP3, FLAC, Ogg, MP4/M4A/MOV, WebM/MKV, AAC, AIFF, CAF, WMA, ...); playlists and concat lists are refused", what)
	}
	bin, err := exec.LookPath("ffmpeg")
	if err != nil {
		return nil, fmt.Errorf("%s: decoding it needs ffmpeg, which is not installed (not found on PATH)", what)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "-nostdin", "-hide_banner", "-loglevel", "error",
		"-threads", "0", "-protocol_whitelist", "file", "-f", k.demuxer,
		"-i", "file:"+abs, "-vn", "-sn", "-dn",
		"-f", "f32le", "-acodec", "pcm_f32le", "-ac", "1", "-ar", "16000", "-")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	tail := &tailBuffer{max: 4096}
	cmd.Stderr = tail
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: starting ffmpeg: %w", what, err)
	}
	return &ffmpegStream{cmd: cmd, out: out, r: bufio.NewReaderSize(out, 64<<10), stderr: tail, name: what}, nil
}

func (s *ffmpegStream) SampleRate() int { return 16000 }
func (s *ffmpegStream) Channels() int   { return 1 }
func (s *ffmpegStream) Format() string  { return "ffmpeg" }

func (s *ffmpegStream) Read(p []float32) (int, error) {
	if s.ended {
		if s.err != nil {
			return 0, s.err
		}
		return 0, io.EOF
	}
	n := min(len(p), 16384)
	if n == 0 {
		return 0, errors.New("audio: Read buffer smaller than one frame")
	}
	if cap(s.buf) < 4*n {
		s.buf = make([]byte, 4*n)
	}
	b := s.buf[:4*n]
	m, err := io.ReadAtLeast(s.r, b, 4)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return 0, err
	}
	// Keep frames whole: finish a partial float before returning.
	if r := m % 4; r != 0 && err == nil {
		k, err2 := io.ReadFull(s.r, b[m:m+4-r])
		m += k
		err = err2
	}
	frames := m / 4
	for i := range frames {
		p[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	s.total += int64(frames)
	if err != nil {
		s.finish()
		if frames > 0 && s.err == nil {
			return frames, nil
		}
		if s.err != nil {
			return 0, s.err
		}
		return 0, io.EOF
	}
	return frames, nil
}

// finish waits for ffmpeg and turns a failure into an error carrying its
// last stderr line.
func (s *ffmpegStream) finish() {
	if s.ended {
		return
	}
	s.ended = true
	if err := s.cmd.Wait(); err != nil {
		msg := s.stderr.lastLine()
		if msg == "" {
			msg = err.Error()
		}
		s.err = fmt.Errorf("%s: ffmpeg failed: %s", s.name, msg)
		return
	}
	if s.total == 0 {
		s.err = fmt.Errorf("%s: ffmpeg found no audio stream", s.name)
	}
}

func (s *ffmpegStream) Close() error {
	if !s.ended {
		s.ended = true
		_ = s.cmd.Process.Kill()
		_ = s.out.Close()
		_ = s.cmd.Wait()
	}
	return nil
}

// tailBuffer keeps the last max bytes written to it (ffmpeg's stderr).
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) lastLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(bytes.ToValidUTF8(t.b, nil))), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
