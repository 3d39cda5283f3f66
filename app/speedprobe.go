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
func (m *Models) probeSpeed() {
	settings := m.deps.settings
	set, err := settings.Get()
	if err != nil || (set.SpeedProbe != nil && set.SpeedProbe.Choice == set.backendChoice()) {
		return
	}
	m.deps.life.background(func() {
		p, err := m.measure(m.deps.life.ctx, set.backendChoice())
		if err != nil {
			return // no speech model yet: measured on a later start
		}
		if err := settings.setSpeedProbe(p); err == nil {
			m.deps.emit.Emit(EventModelsChanged, ModelsChange{Probed: p.Model})
		}
	})
}

// setSpeedProbe stores the measured speed in the settings.
func (s *Settings) setSpeedProbe(p SpeedProbe) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.Get()
	if err != nil {
		return err
	}
	d.SpeedProbe = &p
	return s.saveLocked(d)
}

// settingsChanged applies a settings change to the loaded models now: the
// idle unload time, the backend, and the speed probe again (ForceCPU may
// have changed).
func (m *Models) settingsChanged(d SettingsData) error {
	m.deps.rt.UnloadIdle()
	if err := m.deps.rt.SetBackend(d.backendChoice()); err != nil {
		return err
	}
	if !m.deps.noProbe {
		m.probeSpeed()
	}
	return nil
}

// measure times one encoder pass of a 30-s window (after a warm-up pass)
// with the smallest installed speech model of a known shape.
func (m *Models) measure(ctx context.Context, choice string) (SpeedProbe, error) {
	list, err := m.deps.store.List()
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
	sm, err := m.deps.rt.Speech(ctx, path, runtime.Batch)
	if err != nil {
		return SpeedProbe{}, err
	}
	defer sm.Release()
	params := paramsOf(sm.File.H)
	if params == 0 {
		return SpeedProbe{}, errors.New("not a Whisper shape with published figures")
	}
	window := make([]float32, sm.File.H.NMels*sm.File.H.NFrames())
	if err := sm.Model.Encode(window); err != nil {
		return SpeedProbe{}, err
	}
	start := time.Now()
	if err := sm.Model.Encode(window); err != nil {
		return SpeedProbe{}, err
	}
	ms := float64(time.Since(start).Microseconds()) / 1000
	return SpeedProbe{Probe: models.Probe{Model: name, Params: params, Backend: sm.Backend, WindowMs: ms}, Choice: choice}, nil
}
