// Package audio turns audio files into what Whisper consumes: 16 kHz mono
// float32 samples and log-mel spectrograms.
//
// Files are decoded as streams (Open), so long recordings are never held
// whole in their original form: WAV, MP3, FLAC and Ogg Vorbis with pure-Go
// decoders, the other containers Hark recognises (MP4/M4A/MOV, WebM/MKV,
// AAC, AIFF, CAF, WMA, AVI, ...) through ffmpeg when it is installed, with
// its demuxer pinned and only local-file input allowed; anything else,
// playlists and concat lists included, is refused. To16kMono
// downmixes and resamples a stream with a band-limited polyphase filter;
// Load16k does it all for a path. LogMel computes Whisper's log-mel
// spectrogram from 16 kHz samples and a filter bank (from the model file, or
// openai-whisper's mel_filters.npz through LoadMelFilters).
//
// The package is pure Go (no cgo), so it builds for every GOOS, darwin
// included, with CGO_ENABLED=0.
package audio
