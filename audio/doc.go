// Package audio turns audio files into what Whisper consumes: 16 kHz mono
// float32 samples.
//
// Files are decoded as streams (Open), so long recordings are never held
// whole in their original form: WAV, MP3, FLAC and Ogg Vorbis with pure-Go
// decoders, the other containers Hark recognises (MP4/M4A/MOV, WebM/MKV,
// AAC, AIFF, CAF, WMA, AVI, ...) through ffmpeg when it is installed, with
// its demuxer pinned and only local-file input allowed; anything else,
// playlists and concat lists included, is refused. To16kMono
// downmixes and resamples a stream with a band-limited polyphase filter;
// Load16k does it all for a path. Whisper's log-mel spectrogram is
// engine/whisper/mel's (it needs the engine's BLAS); audio imports nothing
// of the engine.
//
// The package is pure Go (no cgo), so it builds for every GOOS, darwin
// included, with CGO_ENABLED=0.
package audio
