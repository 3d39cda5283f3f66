package audio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"time"
)

// WAVWriter writes 16 kHz mono 16-bit PCM as it arrives and keeps the
// header true after every write: data goes first, then the two sizes are
// rewritten in place. A process killed at any moment (kill -9, a crash in
// the engine) leaves a playable file holding all but at most the write in
// flight; the OS has the bytes even if we never close. Sync (also done
// every syncEvery) protects against power loss too.
type WAVWriter struct {
	f        WAVFile
	rate     int
	channels int
	data     int64 // bytes of samples written
	buf      []byte
	lastSync time.Time
}

const (
	wavHeaderSize = 44
	// maxWAVData keeps the RIFF size field within 32 bits (about 37 hours
	// of 16 kHz mono 16-bit).
	maxWAVData = math.MaxUint32 - wavHeaderSize
	syncEvery  = 2 * time.Second
)

// WAVFile is what a WAVWriter writes to (an *os.File; tests inject one
// whose writes fail, as on a full disk).
type WAVFile interface {
	Write([]byte) (int, error)
	WriteAt([]byte, int64) (int, error)
	Sync() error
	Close() error
}

// CreateFile opens a recording's file (truncating it).
func CreateFile(path string) (WAVFile, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
}

// CreateWAV creates (truncating) a WAV file and writes its header.
func CreateWAV(path string, rate int) (*WAVWriter, error) {
	if rate <= 0 {
		return nil, fmt.Errorf("audio: invalid sample rate %d", rate)
	}
	f, err := CreateFile(path)
	if err != nil {
		return nil, err
	}
	return NewWAVWriter(f, rate)
}

// NewWAVWriter writes a WAV header to f and returns the writer that
// appends to it; it closes f when the header cannot be written.
func NewWAVWriter(f WAVFile, rate int) (*WAVWriter, error) {
	return NewWAVWriterChannels(f, rate, 1)
}

// NewWAVWriterChannels is NewWAVWriter for interleaved multi-channel audio
// (a meeting's microphone and system channels): Write then takes whole
// frames.
func NewWAVWriterChannels(f WAVFile, rate, channels int) (*WAVWriter, error) {
	if rate <= 0 || channels < 1 || channels > 8 {
		f.Close()
		return nil, fmt.Errorf("audio: invalid WAV format: %d Hz, %d channels", rate, channels)
	}
	w := &WAVWriter{f: f, rate: rate, channels: channels, lastSync: time.Now()}
	h := make([]byte, wavHeaderSize)
	copy(h, "RIFF")
	binary.LittleEndian.PutUint32(h[4:], 36)
	copy(h[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(h[16:], 16)
	binary.LittleEndian.PutUint16(h[20:], 1) // PCM
	binary.LittleEndian.PutUint16(h[22:], uint16(channels))
	binary.LittleEndian.PutUint32(h[24:], uint32(rate))
	binary.LittleEndian.PutUint32(h[28:], uint32(rate*2*channels))
	binary.LittleEndian.PutUint16(h[32:], uint16(2*channels))
	binary.LittleEndian.PutUint16(h[34:], 16)
	copy(h[36:], "data")
	if _, err := f.Write(h); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// Write appends samples (clipped to [-1, 1]; interleaved whole frames
// when there are several channels) and updates the header.
func (w *WAVWriter) Write(x []float32) error {
	if w.f == nil {
		return errors.New("audio: WAV writer is closed")
	}
	if len(x)%w.channels != 0 {
		return fmt.Errorf("audio: %d samples are not whole %d-channel frames", len(x), w.channels)
	}
	if len(x) == 0 {
		return nil
	}
	if w.data+int64(2*len(x)) > maxWAVData {
		return errors.New("audio: recording too long for a WAV file")
	}
	if cap(w.buf) < 2*len(x) {
		w.buf = make([]byte, 2*len(x))
	}
	b := w.buf[:2*len(x)]
	for i, v := range x {
		s := math.Round(float64(v) * 32767)
		s = max(-32768, min(32767, s))
		binary.LittleEndian.PutUint16(b[2*i:], uint16(int16(s)))
	}
	if _, err := w.f.WriteAt(b, wavHeaderSize+w.data); err != nil {
		return err
	}
	w.data += int64(len(b))
	if err := w.header(); err != nil {
		return err
	}
	if time.Since(w.lastSync) >= syncEvery {
		w.lastSync = time.Now()
		return w.f.Sync()
	}
	return nil
}

// header rewrites the RIFF and data chunk sizes.
func (w *WAVWriter) header() error {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], uint32(36+w.data))
	if _, err := w.f.WriteAt(b[:], 4); err != nil {
		return err
	}
	binary.LittleEndian.PutUint32(b[:], uint32(w.data))
	_, err := w.f.WriteAt(b[:], 40)
	return err
}

// Samples is how many samples (frames, with several channels) have been
// written.
func (w *WAVWriter) Samples() int64 { return w.data / int64(2*w.channels) }

// Duration is the audio written so far.
func (w *WAVWriter) Duration() time.Duration {
	return time.Duration(w.Samples() * int64(time.Second) / int64(w.rate))
}

// Close syncs and closes the file.
func (w *WAVWriter) Close() error {
	if w.f == nil {
		return nil
	}
	err := w.f.Sync()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.f = nil
	return err
}
