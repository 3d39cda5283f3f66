package mel

import (
	"archive/zip"
	"fmt"
)

// Whisper's STFT geometry.
const (
	NFFT      = 400
	HopLength = 160
	NFreq     = NFFT/2 + 1 // 201 one-sided bins
)

// MelFilters is a mel filter bank: NMels rows of NFreq weights, row-major,
// applied to the power spectrum. Whisper model files carry it; openai-whisper
// ships it as mel_filters.npz.
type MelFilters struct {
	NMels int
	Data  []float32 // [NMels][NFreq]
	// span[m] is the [lo, hi) range of non-zero weights of row m, so the
	// product skips the zeros (identical result: they add exact zeros).
	span [][2]int
}

// NewMelFilters wraps a [nMels][201] filter matrix (as read from a model
// file) after checking its shape.
func NewMelFilters(nMels int, data []float32) (*MelFilters, error) {
	if nMels <= 0 || nMels > 1024 {
		return nil, fmt.Errorf("audio: invalid mel count %d", nMels)
	}
	if len(data) != nMels*NFreq {
		return nil, fmt.Errorf("audio: mel filters have %d values, want %d x %d", len(data), nMels, NFreq)
	}
	f := &MelFilters{NMels: nMels, Data: data, span: make([][2]int, nMels)}
	for m := range nMels {
		row := data[m*NFreq : (m+1)*NFreq]
		lo, hi := 0, 0
		for k, v := range row {
			if v != 0 {
				if hi == 0 {
					lo = k
				}
				hi = k + 1
			}
		}
		f.span[m] = [2]int{lo, hi}
	}
	return f, nil
}

// LoadMelFilters reads the nMels-bin filter bank ("mel_80", "mel_128") from
// openai-whisper's mel_filters.npz (a zip of .npy arrays).
func LoadMelFilters(npzPath string, nMels int) (*MelFilters, error) {
	z, err := zip.OpenReader(npzPath)
	if err != nil {
		return nil, fmt.Errorf("audio: mel filters %s: %w", npzPath, err)
	}
	defer z.Close()
	name := fmt.Sprintf("mel_%d.npy", nMels)
	for _, f := range z.File {
		if f.Name != name {
			continue
		}
		if f.UncompressedSize64 > 1<<26 {
			return nil, fmt.Errorf("audio: mel filters %s: %s too large", npzPath, name)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("audio: mel filters %s: %w", npzPath, err)
		}
		a, err := readNPY(rc, int64(f.UncompressedSize64))
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("audio: mel filters %s/%s: %w", npzPath, name, err)
		}
		if len(a.shape) != 2 || a.shape[0] != nMels || a.shape[1] != NFreq {
			return nil, fmt.Errorf("audio: mel filters %s/%s: shape %v, want [%d %d]", npzPath, name, a.shape, nMels, NFreq)
		}
		return NewMelFilters(nMels, a.data)
	}
	return nil, fmt.Errorf("audio: mel filters %s: no %s in the archive", npzPath, name)
}
