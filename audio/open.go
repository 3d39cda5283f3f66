package audio

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// Open opens an audio (or video) file for streaming decoding. The format is
// recognised from the file's leading bytes. WAV, MP3, FLAC and Ogg Vorbis are
// decoded in-process; the other recognised containers (MP4/M4A/MOV,
// WebM/MKV, ...) are decoded by ffmpeg when it is on PATH (its stream is then
// already 16 kHz mono). Anything else, playlists and concat lists included,
// is refused: ffmpeg would follow the files they name.
func Open(path string) (Stream, error) {
	s, err := open(path)
	if err != nil {
		return nil, fmt.Errorf("audio: %s: %w", path, err)
	}
	return s, nil
}

func open(path string) (Stream, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if st.IsDir() {
		f.Close()
		return nil, errors.New("is a directory")
	}
	if st.Size() == 0 {
		f.Close()
		return nil, errors.New("empty file (0 bytes)")
	}
	head, err := readAt(f, 0, sniffLen)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("reading header: %w", err)
	}
	// Skip a leading ID3v2 tag (MP3s, sometimes FLACs) before sniffing.
	var start int64
	if n := id3v2Size(head); n > 0 && n < st.Size() {
		start = n
		if head, err = readAt(f, start, sniffLen); err != nil {
			f.Close()
			return nil, fmt.Errorf("reading header: %w", err)
		}
	}
	k := sniff(head, start)

	var s Stream
	switch k.codec {
	case "wav":
		s, err = newWAV(f)
		var unsup *unsupportedWAVError
		if errors.As(err, &unsup) && ffmpegAvailable() {
			// Exotic WAV codecs (ADPCM, A-law, ...) are ffmpeg's job.
			f.Close()
			return newFFmpeg(path, kind{"", "WAV (" + unsup.what + ")", "wav", fmtWAV.exts})
		}
	case "flac":
		if _, err = f.Seek(0, io.SeekStart); err == nil {
			s, err = safely("flac", func() (Stream, error) { return newFLAC(f) }) // it skips an ID3v2 tag itself
		}
	case "mp3":
		if _, err = f.Seek(start, io.SeekStart); err == nil {
			s, err = safely("mp3", func() (Stream, error) { return newMP3(f, start) })
		}
	case "vorbis":
		if _, err = f.Seek(0, io.SeekStart); err == nil {
			s, err = safely("vorbis", func() (Stream, error) { return newVorbis(f) })
		}
	default:
		f.Close()
		return newFFmpeg(path, k)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", k.name, err)
	}
	if k.codec != "wav" { // Hark's own decoder; the others are third-party
		s = guarded{s}
	}
	return s, nil
}

// readAt reads up to n bytes at off; a short file is not an error.
func readAt(f *os.File, off int64, n int) ([]byte, error) {
	b := make([]byte, n)
	m, err := f.ReadAt(b, off)
	if err != nil && err != io.EOF {
		return nil, err
	}
	return b[:m], nil
}
