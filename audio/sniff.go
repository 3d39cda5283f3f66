package audio

import (
	"bytes"
	"encoding/binary"
	"strings"
)

// kind is what the first bytes of a file say it is.
type kind struct {
	// codec picks the decoder: "wav", "mp3", "flac", "vorbis", or "" for
	// formats left to ffmpeg.
	codec string
	// name is a human name for messages ("MP4/M4A", "Ogg Opus", ...).
	name string
	// demuxer is the ffmpeg demuxer (-f) for the formats left to ffmpeg.
	// ffmpeg is never left to guess: its probing would accept playlists
	// (HLS, M3U) and concat lists, which name other files to read.
	demuxer string
	// exts are the file name extensions the format goes by (formats.go).
	exts []string
}

// sniffLen is how many leading bytes sniff looks at: enough for the Ogg first
// page header and an ID3v2 header.
const sniffLen = 512

// sniff identifies a file from its leading bytes (magic numbers), not its
// extension, so a mis-named file still decodes. id3End is the offset after
// a leading ID3v2 tag (0 when there is none).
func sniff(h []byte, id3End int64) kind {
	has := func(off int, magic string) bool {
		return len(h) >= off+len(magic) && string(h[off:off+len(magic)]) == magic
	}
	switch {
	case has(0, "RIFF") && has(8, "WAVE"), has(0, "RF64") && has(8, "WAVE"):
		return fmtWAV
	case has(0, "RIFF") && has(8, "AVI "):
		return fmtAVI
	case has(0, "riff\x2e\x91\xcf\x11\xa5\xd6\x28\xdb\x04\xc1\x00\x00"):
		return fmtWave64
	case has(0, "FLV\x01"):
		return fmtFLV
	case has(0, "fLaC"):
		return fmtFLAC
	case has(0, "OggS"):
		return sniffOgg(h)
	case has(4, "ftyp"):
		if has(8, "qt  ") {
			return fmtMOV
		}
		if has(8, "M4A ") || has(8, "M4B ") || has(8, "M4P ") {
			return fmtM4A
		}
		return fmtMP4
	case has(0, "\x1a\x45\xdf\xa3"):
		if bytes.Contains(h, []byte("webm")) {
			return fmtWebM
		}
		return fmtMatroska
	case has(0, "\x30\x26\xb2\x75\x8e\x66\xcf\x11"):
		return fmtASF
	case has(0, "FORM") && (has(8, "AIFF") || has(8, "AIFC")):
		return fmtAIFF
	case has(0, "caff"):
		return fmtCAF
	case has(0, "#!AMR"):
		return fmtAMR
	case has(0, "MAC "):
		return fmtAPE
	case has(0, "wvpk"):
		return fmtWavPack
	case has(0, ".snd"):
		return fmtAU
	case has(0, "\x00\x00\x01\xba"), has(0, "\x00\x00\x01\xb3"):
		return fmtMPEGPS
	case len(h) >= 189 && h[0] == 0x47 && h[188] == 0x47:
		return fmtMPEGTS
	case has(0, "\x0b\x77"):
		return fmtAC3
	case isPlaylist(h):
		return fmtPlaylist
	}
	if len(h) >= 2 && h[0] == 0xff && h[1]&0xf6 == 0xf0 {
		// Frame sync with layer bits 00: AAC in ADTS, not MPEG audio.
		return fmtAAC
	}
	if layer, ok := mpegAudioFrame(h); ok {
		if layer == 3 {
			return fmtMP3
		}
		return fmtMPEG12
	}
	if id3End > 0 {
		// An ID3v2 tag followed by something that is not an MPEG frame
		// (e.g. padding): still most likely an MP3.
		return fmtMP3
	}
	return kind{}
}

// sniffOgg looks at the first packet of the first page, which names the codec.
func sniffOgg(h []byte) kind {
	if len(h) < 27 {
		return fmtOgg
	}
	nseg := int(h[26])
	off := 27 + nseg
	if len(h) < off+8 {
		return fmtOgg
	}
	p := h[off:]
	switch {
	case bytes.HasPrefix(p, []byte("\x01vorbis")):
		return fmtVorbis
	case bytes.HasPrefix(p, []byte("OpusHead")):
		return fmtOpus
	case bytes.HasPrefix(p, []byte("\x7fFLAC")):
		return fmtOggFLAC
	case bytes.HasPrefix(p, []byte("Speex")):
		return fmtSpeex
	}
	return fmtOgg
}

// mpegAudioFrame checks for a valid MPEG audio frame header at h[0] and
// returns its layer (1, 2 or 3).
func mpegAudioFrame(h []byte) (int, bool) {
	if len(h) < 4 {
		return 0, false
	}
	v := binary.BigEndian.Uint32(h)
	if v>>21 != 0x7ff {
		return 0, false
	}
	version := (v >> 19) & 3 // 01 is reserved
	layerBits := (v >> 17) & 3
	bitrate := (v >> 12) & 15
	rate := (v >> 10) & 3
	if version == 1 || layerBits == 0 || bitrate == 15 || rate == 3 {
		return 0, false
	}
	return int(4 - layerBits), true
}

// id3v2Size returns the total size of an ID3v2 tag at the start of h, or 0.
func id3v2Size(h []byte) int64 {
	if len(h) < 10 || string(h[:3]) != "ID3" {
		return 0
	}
	for _, b := range h[6:10] {
		if b&0x80 != 0 {
			return 0 // sizes are 7-bit "syncsafe" integers
		}
	}
	size := int64(h[6])<<21 | int64(h[7])<<14 | int64(h[8])<<7 | int64(h[9])
	size += 10
	if h[5]&0x10 != 0 {
		size += 10 // footer
	}
	return size
}

// isPlaylist reports text that ffmpeg would read as a list of other files or
// URLs (HLS/M3U, ffconcat, PLS), so that the refusal can say what it is.
func isPlaylist(h []byte) bool {
	t := bytes.TrimLeft(bytes.TrimPrefix(h, []byte("\xef\xbb\xbf")), " \t\r\n")
	for _, magic := range []string{"#EXTM3U", "#EXT-X-", "#EXTINF", "ffconcat", "[playlist]"} {
		if len(t) >= len(magic) && strings.EqualFold(string(t[:len(magic)]), magic) {
			return true
		}
	}
	return false
}
