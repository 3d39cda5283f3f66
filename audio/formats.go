package audio

import "slices"

// The formats Hark reads: one table, which sniff picks from by a file's
// leading bytes and which gives every file picker (the window's dialog,
// the page's <input accept>) its list of extensions (Extensions). The
// extension only filters a picker: the bytes decide.
var (
	fmtWAV      = kind{"wav", "WAV", "wav", []string{".wav"}}
	fmtWave64   = kind{"", "Wave64", "w64", []string{".w64"}}
	fmtMP3      = kind{"mp3", "MP3", "mp3", []string{".mp3"}}
	fmtMPEG12   = kind{"", "MPEG audio layer I/II", "mp3", []string{".mp2", ".mpa"}}
	fmtFLAC     = kind{"flac", "FLAC", "flac", []string{".flac"}}
	fmtVorbis   = kind{"vorbis", "Ogg Vorbis", "ogg", []string{".ogg", ".oga"}}
	fmtOpus     = kind{"", "Ogg Opus", "ogg", []string{".opus", ".ogg"}}
	fmtOggFLAC  = kind{"", "Ogg FLAC", "ogg", []string{".oga", ".ogg"}}
	fmtSpeex    = kind{"", "Ogg Speex", "ogg", []string{".spx", ".ogg"}}
	fmtOgg      = kind{"", "Ogg", "ogg", []string{".ogg", ".oga"}}
	fmtMP4      = kind{"", "MP4", "mov", []string{".mp4", ".m4v"}}
	fmtM4A      = kind{"", "M4A (AAC/ALAC)", "mov", []string{".m4a", ".m4b"}}
	fmtMOV      = kind{"", "QuickTime MOV", "mov", []string{".mov"}}
	fmtWebM     = kind{"", "WebM", "matroska", []string{".webm"}}
	fmtMatroska = kind{"", "Matroska (MKV/MKA)", "matroska", []string{".mkv", ".mka"}}
	fmtAVI      = kind{"", "AVI", "avi", []string{".avi"}}
	fmtFLV      = kind{"", "Flash video (FLV)", "flv", []string{".flv"}}
	fmtASF      = kind{"", "WMA/WMV (ASF)", "asf", []string{".wma", ".wmv"}}
	fmtAIFF     = kind{"", "AIFF", "aiff", []string{".aiff", ".aif", ".aifc"}}
	fmtCAF      = kind{"", "Core Audio (CAF)", "caf", []string{".caf"}}
	fmtAMR      = kind{"", "AMR", "amr", []string{".amr"}}
	fmtAPE      = kind{"", "Monkey's Audio (APE)", "ape", []string{".ape"}}
	fmtWavPack  = kind{"", "WavPack", "wv", []string{".wv"}}
	fmtAU       = kind{"", "Sun AU", "au", []string{".au"}}
	fmtMPEGPS   = kind{"", "MPEG program stream", "mpeg", []string{".mpg", ".mpeg"}}
	fmtMPEGTS   = kind{"", "MPEG transport stream", "mpegts", []string{".ts"}}
	fmtAC3      = kind{"", "AC-3", "ac3", []string{".ac3"}}
	fmtAAC      = kind{"", "AAC (ADTS)", "aac", []string{".aac"}}
	// A playlist or concat list is recognised only to be refused: ffmpeg
	// would read the files it names.
	fmtPlaylist = kind{"", "playlist or concat list", "", nil}
)

// formats is the table, in the order the pickers list it (the formats
// decoded in-process first).
var formats = []kind{
	fmtWAV, fmtMP3, fmtFLAC, fmtVorbis, fmtMP4, fmtM4A, fmtMOV, fmtWebM, fmtMatroska,
	fmtOpus, fmtOggFLAC, fmtSpeex, fmtOgg, fmtAAC, fmtMPEG12, fmtWave64, fmtAVI, fmtFLV, fmtASF,
	fmtAIFF, fmtCAF, fmtAMR, fmtAPE, fmtWavPack, fmtAU, fmtMPEGPS, fmtMPEGTS, fmtAC3, fmtPlaylist,
}

// Extensions lists the file name extensions (".wav", ...) of the formats
// Open reads, for file pickers; the formats without an in-process decoder
// need ffmpeg on PATH.
func Extensions() []string {
	var out []string
	for _, k := range formats {
		if k.demuxer == "" {
			continue // refused
		}
		for _, e := range k.exts {
			if !slices.Contains(out, e) {
				out = append(out, e)
			}
		}
	}
	return out
}
