package app

import (
	"context"
	"errors"
	"time"

	"github.com/harkapp/hark/engine/models"
	"github.com/harkapp/hark/engine/runtime"
	"github.com/harkapp/hark/engine/whisper"
)

// SpeedProbe is this machine's measured speed (kept in the settings): one
// encoder window of the smallest installed speech model on the backend
// the app uses, under the backend choice it was measured with.
type SpeedProbe struct {
	models.Probe
	Choice string `json:"choice"` // the backend choice ("auto", "cpu")
}

// paramsOf is the published parameter count of a Whisper model with h's
// shape (openai/whisper's README, via accuracy.json's families); 0 when
// the shape is not one of OpenAI's.
func paramsOf(h whisper.HParams) int64 {
	fam := map[int]string{384: "tiny", 512: "base", 768: "small", 1024: "medium", 1280: "large-v3"}[h.NAudioState]
	if fam == "large-v3" && h.NTextLayer == 4 {
		fam = "large-v3-turbo"
	}
	for _, f := range models.Families() {
		if f.Family == fam {
			return f.Params
		}
	}
	return 0
}

// probeSpeed measures the speed once in the background when the settings
// have no measurement for the current backend choice (first start, or
// after ForceCPU changed), then emits "models:changed".
func (a *App) probeSpeed() {
	set, err := a.Settings.Get()
	if err != nil || (set.SpeedProbe != nil && set.SpeedProbe.Choice == set.backendChoice()) {
		return
	}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		p, err := a.measure(a.ctx, set.backendChoice())
		if err != nil {
			return // no speech model yet: measured on a later start
		}
		a.Settings.mu.Lock()
		s, err := a.Settings.Get()
		if err == nil {
			s.SpeedProbe = &p
			err = a.Settings.saveLocked(s)
		}
		a.Settings.mu.Unlock()
		if err == nil {
			a.emit.Emit(EventModelsChanged, map[string]any{"probed": p.Model})
		}
	}()
}

// measure times one encoder pass of a 30-s window (after a warm-up pass)
// with the smallest installed speech model of a known shape.
func (a *App) measure(ctx context.Context, choice string) (SpeedProbe, error) {
	list, err := a.models.List()
	if err != nil {
		return SpeedProbe{}, err
	}
	var path, name string
	var size int64
	for _, e := range list {
		if taskOf(e.Path) == models.Transcribe && (path == "" || e.Size < size) {
			path, name, size = e.Path, e.Name, e.Size
		}
	}
	if path == "" {
		return SpeedProbe{}, errors.New("no speech model installed")
	}
	m, err := a.rt.Speech(ctx, path, runtime.Batch)
	if err != nil {
		return SpeedProbe{}, err
	}
	defer m.Release()
	params := paramsOf(m.File.H)
	if params == 0 {
		return SpeedProbe{}, errors.New("not a Whisper shape with published figures")
	}
	window := make([]float32, m.File.H.NMels*m.File.H.NFrames())
	if err := m.Model.Encode(window); err != nil {
		return SpeedProbe{}, err
	}
	start := time.Now()
	if err := m.Model.Encode(window); err != nil {
		return SpeedProbe{}, err
	}
	ms := float64(time.Since(start).Microseconds()) / 1000
	return SpeedProbe{Probe: models.Probe{Model: name, Params: params, Backend: m.Backend, WindowMs: ms}, Choice: choice}, nil
}
