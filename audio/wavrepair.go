package audio

import (
	"encoding/binary"
	"fmt"
	"os"
)

// RepairWAV makes a WAV that a WAVWriter left behind (its process killed
// between writing samples and the header) whole: the sizes are taken from
// the file's length, cut to whole frames. It returns the frames it holds.
func RepairWAV(path string) (int64, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	h := make([]byte, wavHeaderSize)
	if _, err := f.ReadAt(h, 0); err != nil {
		return 0, fmt.Errorf("audio: %s: reading the WAV header: %w", path, err)
	}
	if string(h[:4]) != "RIFF" || string(h[8:16]) != "WAVEfmt " || string(h[36:40]) != "data" {
		return 0, fmt.Errorf("audio: %s is not a WAV file written by Hark", path)
	}
	block := int64(binary.LittleEndian.Uint16(h[32:]))
	if block < 1 {
		return 0, fmt.Errorf("audio: %s: invalid WAV block size", path)
	}
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	data := min((st.Size()-wavHeaderSize)/block*block, maxWAVData/block*block)
	if data < 0 {
		data = 0
	}
	if err := f.Truncate(wavHeaderSize + data); err != nil {
		return 0, err
	}
	w := &WAVWriter{f: f, data: data}
	if err := w.header(); err != nil {
		return 0, err
	}
	return data / block, f.Sync()
}
