package audio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// WAVDurationMs reads a WAV file's length from its fmt chunk and the
// bytes actually on disk after the data chunk's start, not the header's
// data size: a recording cut short by a crash may hold more (or fewer)
// samples than its header last claimed.
func WAVDurationMs(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	var hdr [12]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil {
		return 0, fmt.Errorf("%s: not a WAV file: %w", path, err)
	}
	if string(hdr[0:4]) != "RIFF" || string(hdr[8:12]) != "WAVE" {
		return 0, fmt.Errorf("%s: not a WAV file", path)
	}
	var byteRate uint32
	off := int64(12)
	for i := 0; i < 64; i++ { // bounded: a damaged file cannot loop forever
		var ch [8]byte
		if _, err := f.ReadAt(ch[:], off); err != nil {
			return 0, fmt.Errorf("%s: no data chunk", path)
		}
		id, size := string(ch[0:4]), int64(binary.LittleEndian.Uint32(ch[4:8]))
		switch id {
		case "fmt ":
			var fm [16]byte
			if _, err := f.ReadAt(fm[:], off+8); err != nil {
				return 0, fmt.Errorf("%s: short fmt chunk", path)
			}
			byteRate = binary.LittleEndian.Uint32(fm[8:12])
		case "data":
			if byteRate == 0 {
				return 0, errors.New(path + ": data before fmt, or a zero byte rate")
			}
			n := st.Size() - (off + 8)
			if n < 0 {
				n = 0
			}
			return n * 1000 / int64(byteRate), nil
		}
		off += 8 + size + size&1
	}
	return 0, fmt.Errorf("%s: no data chunk", path)
}
