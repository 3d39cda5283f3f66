// Package mel computes Whisper's log-mel spectrogram from 16 kHz mono
// samples (package audio decodes and resamples them) and a filter bank:
// the model file's, or openai-whisper's mel_filters.npz through
// LoadMelFilters. LogMel keeps the spectrogram in memory; LogMelSpool
// streams a long file through a temporary spool, so memory stays flat
// however long the audio. The STFT runs as an FFT (gonum), or on macOS as
// a matrix product in the BLAS (engine/blas: Accelerate's sgemm).
package mel
