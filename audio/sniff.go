package audio

import (
	"bytes"
	"encoding/binary"
)

// kind is what the first bytes of a file say it is.
type kind struct {
	// codec picks the decoder: "wav", "mp3", "flac", "vorbis", or "" for
	// formats left to ffmpeg.
	codec string
	// name is a human name for messages ("MP4/M4A", "Ogg Opus", ...).
	name string
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
		return kind{"wav", "WAV"}
	case has(0, "fLaC"):
		return kind{"flac", "FLAC"}
	case has(0, "OggS"):
		return sniffOgg(h)
	case has(4, "ftyp"):
		if has(8, "qt  ") {
			return kind{"", "QuickTime MOV"}
		}
		if has(8, "M4A ") || has(8, "M4B ") || has(8, "M4P ") {
			return kind{"", "M4A (AAC/ALAC)"}
		}
		return kind{"", "MP4"}
	case has(0, "\x1a\x45\xdf\xa3"):
		if bytes.Contains(h, []byte("webm")) {
			return kind{"", "WebM"}
		}
		return kind{"", "Matroska (MKV/MKA)"}
	case has(0, "\x30\x26\xb2\x75\x8e\x66\xcf\x11"):
		return kind{"", "WMA/WMV (ASF)"}
	case has(0, "FORM") && (has(8, "AIFF") || has(8, "AIFC")):
		return kind{"", "AIFF"}
	case has(0, "caff"):
		return kind{"", "Core Audio (CAF)"}
	case has(0, "#!AMR"):
		return kind{"", "AMR"}
	case has(0, "MAC "):
		return kind{"", "Monkey's Audio (APE)"}
	case has(0, "wvpk"):
		return kind{"", "WavPack"}
	case has(0, ".snd"):
		return kind{"", "Sun AU"}
	case has(0, "\x00\x00\x01\xba"), has(0, "\x00\x00\x01\xb3"):
		return kind{"", "MPEG program stream"}
	case len(h) >= 189 && h[0] == 0x47 && h[188] == 0x47:
		return kind{"", "MPEG transport stream"}
	}
	if len(h) >= 2 && h[0] == 0xff && h[1]&0xf6 == 0xf0 {
		// Frame sync with layer bits 00: AAC in ADTS, not MPEG audio.
		return kind{"", "AAC (ADTS)"}
	}
	if layer, ok := mpegAudioFrame(h); ok {
		if layer == 3 {
			return kind{"mp3", "MP3"}
		}
		return kind{"", "MPEG audio layer I/II"}
	}
	if id3End > 0 {
		// An ID3v2 tag followed by something that is not an MPEG frame
		// (e.g. padding): still most likely an MP3.
		return kind{"mp3", "MP3"}
	}
	return kind{"", ""}
}

// sniffOgg looks at the first packet of the first page, which names the codec.
func sniffOgg(h []byte) kind {
	if len(h) < 27 {
		return kind{"", "Ogg"}
	}
	nseg := int(h[26])
	off := 27 + nseg
	if len(h) < off+8 {
		return kind{"", "Ogg"}
	}
	p := h[off:]
	switch {
	case bytes.HasPrefix(p, []byte("\x01vorbis")):
		return kind{"vorbis", "Ogg Vorbis"}
	case bytes.HasPrefix(p, []byte("OpusHead")):
		return kind{"", "Ogg Opus"}
	case bytes.HasPrefix(p, []byte("\x7fFLAC")):
		return kind{"", "Ogg FLAC"}
	case bytes.HasPrefix(p, []byte("Speex")):
		return kind{"", "Ogg Speex"}
	}
	return kind{"", "Ogg"}
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
