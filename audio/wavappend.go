package audio

import (
	"encoding/binary"
	"fmt"
	"os"
	"time"
)

// AppendWAV reopens a WAV that a WAVWriter wrote (a recording a crash cut
// short, to be resumed) for more of the same audio: it is repaired first
// (RepairWAV), and the writer returned appends after what it holds,
// keeping the header true as before. rate and channels must be the
// file's.
func AppendWAV(path string, rate, channels int) (*WAVWriter, error) {
	frames, err := RepairWAV(path)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	h := make([]byte, wavHeaderSize)
	if _, err := f.ReadAt(h, 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("audio: %s: reading the WAV header: %w", path, err)
	}
	gotCh, gotRate := int(binary.LittleEndian.Uint16(h[22:])), int(binary.LittleEndian.Uint32(h[24:]))
	if binary.LittleEndian.Uint16(h[20:]) != 1 || binary.LittleEndian.Uint16(h[34:]) != 16 || gotCh != channels || gotRate != rate {
		f.Close()
		return nil, fmt.Errorf("audio: %s is not %d Hz %d-channel 16-bit PCM (%d Hz, %d channels)", path, rate, channels, gotRate, gotCh)
	}
	return &WAVWriter{f: f, rate: rate, channels: channels, data: frames * int64(2*channels), lastSync: time.Now()}, nil
}
