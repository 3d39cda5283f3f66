package cli

import (
	"time"

	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/engine/whisper/mel"
)

// The first file's log-mel is computed while the runtime opens the backend
// and loads the model: on a GPU, starting the driver and creating the
// context take ~0.2-0.3 s, about what the spectrogram of minutes of audio
// takes on the host, and neither needs the other. Later files are
// decoded as before, after the previous one.

// spectrogramResult is a prefetched spectrogram, or why the audio file
// has none; neither: no prefetch (the file is decoded as usual).
type spectrogramResult struct {
	spec *mel.SpooledSpectrogram
	err  error
	took time.Duration // computing it (HARK_TIMINGS)
}

// prefetchSpectrogram computes file's spectrogram with the mel filters of
// the Whisper model at modelPath, on a goroutine. The model file's header
// and filters are read apart from the runtime's copy (OpenFileHead: not
// the vocabulary, which OpenFile spent 15-25 ms on in the dev VM before
// the first sample was decoded). Receive exactly once; the receiver
// closes the spectrogram.
func prefetchSpectrogram(modelPath, file string) <-chan spectrogramResult {
	out := make(chan spectrogramResult, 1)
	go func() {
		t0 := time.Now()
		f, err := whisper.OpenFileHead(modelPath)
		if err != nil { // the runtime's load says why; the file is decoded after it
			out <- spectrogramResult{}
			return
		}
		defer f.Close()
		spec, err := f.FileSpectrogram(file, 0)
		out <- spectrogramResult{spec: spec, err: err, took: time.Since(t0)}
	}()
	return out
}

// discardSpectrogram waits for a prefetch nobody will use and frees it.
func discardSpectrogram(c <-chan spectrogramResult) {
	if r := <-c; r.spec != nil {
		r.spec.Close()
	}
}
