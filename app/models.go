package app

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/harkapp/hark/engine/models"
	"github.com/harkapp/hark/engine/runtime"
)

// ModelInfo describes a catalog model or an installed file.
type ModelInfo struct {
	Name        string `json:"name"`
	Task        string `json:"task"` // "transcribe" (Whisper) | "chat" (GGUF LLM)
	Installed   bool   `json:"installed"`
	SizeBytes   int64  `json:"sizeBytes"`   // on disk when installed, else the catalog's (0: unknown)
	MemoryBytes int64  `json:"memoryBytes"` // to run it (0: unknown)
	Notes       string `json:"notes"`
	Recommended bool   `json:"recommended"` // the pick for this machine's memory
	Verified    bool   `json:"verified"`    // a published sha256 is checked on download
	Path        string `json:"path"`        // the file, when installed
	InCatalog   bool   `json:"inCatalog"`   // false: imported by the user
	Downloading bool   `json:"downloading"`
	Loaded      bool   `json:"loaded"`  // in memory now
	Backend     string `json:"backend"` // what it runs on when loaded ("cpu", "metal")
	// License, when set, is shown before the download and must be
	// accepted (Pull's acceptLicense).
	License *models.License `json:"license,omitempty"`
	// Speech models, once the machine's speed is measured: the estimated
	// time of one 30-s window here, the published accuracy (0: none
	// found) with its source, and which tasks recommend it and why.
	WindowMs       float64           `json:"windowMs"`
	Speed          string            `json:"speed"`     // what WindowMs is fast enough for: models.SpeedClass
	Estimated      bool              `json:"estimated"` // WindowMs is estimated from the machine, not measured
	WER            float64           `json:"wer"`
	WERSource      string            `json:"werSource"`
	RecommendedFor []string          `json:"recommendedFor"` // "dictation", "files"
	Why            map[string]string `json:"why"`            // per task in RecommendedFor: the reason
}

// Advice is the speech recommendation per task and the measurement it
// comes from: until a speech model is installed and timed, an estimate
// from the machine's description (Probe.Estimated says for what machine).
type Advice struct {
	Probe     *SpeedProbe `json:"probe"`
	Dictation string      `json:"dictation"`
	DictWhy   string      `json:"dictationWhy"`
	Files     string      `json:"files"`
	FilesWhy  string      `json:"filesWhy"`
}

// Advice recommends speech models for dictation and files from the
// measured speed (or the machine's estimated one) and the published
// accuracy figures.
func (m *Models) Advice() (Advice, error) {
	s, err := m.deps.settings.Get()
	if err != nil {
		return Advice{}, err
	}
	p := s.SpeedProbe
	if p == nil || p.Choice != s.backendChoice() {
		p = &SpeedProbe{Probe: m.deps.machine(s.backendChoice()).Estimate(), Choice: s.backendChoice()}
	}
	return AdviseFor(p, models.TotalRAM()), nil
}

// AdviseFor is the advice for a speed probe (measured or estimated) and
// the machine's memory; the CLI gives the same advice.
func AdviseFor(p *SpeedProbe, ram int64) Advice {
	d := models.AdviseSpeech(p.Probe, ram, models.DictationWindowMs, "dictation")
	f := models.AdviseSpeech(p.Probe, ram, models.FilesWindowMs, "files (5x real time)")
	return Advice{Probe: p, Dictation: d.Name, DictWhy: d.Reason, Files: f.Name, FilesWhy: f.Reason}
}

// PullProgress is the payload of "models:progress".
type PullProgress struct {
	Name  string  `json:"name"`
	Done  int64   `json:"done"`
	Total int64   `json:"total"` // 0 when unknown
	Rate  float64 `json:"rate"`  // bytes per second
	ETA   float64 `json:"eta"`   // seconds, 0 when unknown
}

// PullDone is the payload of "models:done".
type PullDone struct {
	Name  string `json:"name"`
	Error string `json:"error,omitempty"`
	Path  string `json:"path,omitempty"`
}

// Models is the model manager service: the built-in catalog and the
// models folder.
type Models struct {
	deps modelsDeps
	dl   *models.Downloader

	mu    sync.Mutex
	pulls map[string]context.CancelFunc
	wg    sync.WaitGroup
}

// modelsDeps is what Models uses of the app: the settings (chosen
// models), the models folder, the shared model cache (what is loaded, and
// dropping a removed file), uploads (imports) and whether it is closing.
type modelsDeps struct {
	settings interface {
		settingsReader
		setSpeedProbe(SpeedProbe) error
	}
	// machine describes this machine for the advice before a speech
	// model is measured (runtime.ThisMachine; tests inject one).
	machine func(choice string) models.Machine
	store   *models.Store
	rt      *runtime.Runtime
	emit    Emitter
	uploads *uploads
	life    *lifetime // the speed probe runs in it; closed: no new pulls
	noProbe bool      // Config.NoSpeedProbe
}

// taskOf guesses an installed file's task from its extension (Inspect
// would open every file; the extension is what the store itself goes by).
func taskOf(path string) models.Task {
	if strings.EqualFold(filepath.Ext(path), ".gguf") {
		return models.Chat
	}
	return models.Transcribe
}

// List returns the catalog, with what is installed, then the installed
// files the catalog does not know (imports).
func (m *Models) List() ([]ModelInfo, error) {
	installed, err := m.deps.store.List()
	if err != nil {
		return nil, err
	}
	byName := map[string]models.Entry{}
	for _, e := range installed {
		byName[e.Name] = e
	}
	// Speech models are recommended by the advice (speed and accuracy),
	// chat models by memory.
	_, chatRec := models.Recommend(models.TotalRAM())
	adv, _ := m.Advice()
	loaded := map[string]string{} // path -> backend
	for _, in := range m.deps.rt.Loaded() {
		loaded[in.Path] = in.Backend
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []ModelInfo
	for _, c := range models.Catalog() {
		mi := ModelInfo{Name: c.Name, Task: string(c.Task), SizeBytes: c.Size, MemoryBytes: int64(c.MemoryMB) << 20,
			Notes: c.Notes, Verified: c.Verified(), InCatalog: true, License: c.License,
			Recommended: c.Name == chatRec.Name}
		if e, ok := byName[c.Name]; ok {
			mi.Installed, mi.Path, mi.SizeBytes = true, e.Path, e.Size
			delete(byName, c.Name)
		}
		_, mi.Downloading = m.pulls[c.Name]
		if fam, ok := models.FamilyOf(c.Name); ok && c.Task == models.Transcribe {
			mi.WER, mi.WERSource = fam.WER, fam.Source
			if adv.Probe != nil {
				mi.WindowMs = adv.Probe.Estimate(fam.Params)
				mi.Speed = models.SpeedClass(mi.WindowMs)
				mi.Estimated = adv.Probe.Estimated != ""
			}
			for _, r := range []struct{ task, name, why string }{{"dictation", adv.Dictation, adv.DictWhy}, {"files", adv.Files, adv.FilesWhy}} {
				if c.Name == r.name {
					if mi.Why == nil {
						mi.Why = map[string]string{}
					}
					mi.RecommendedFor, mi.Why[r.task] = append(mi.RecommendedFor, r.task), r.why
				}
			}
			mi.Recommended = mi.Recommended || len(mi.RecommendedFor) > 0
		}
		mi.Backend = loaded[mi.Path]
		mi.Loaded = mi.Backend != ""
		out = append(out, mi)
	}
	for _, e := range installed {
		if _, ok := byName[e.Name]; !ok {
			continue
		}
		out = append(out, ModelInfo{Name: e.Name, Task: string(taskOf(e.Path)), Installed: true, SizeBytes: e.Size,
			Path: e.Path, Notes: "imported", Loaded: loaded[e.Path] != "", Backend: loaded[e.Path]})
	}
	return out, nil
}

// Pull downloads a catalog model in the background: "models:progress"
// while it runs, "models:done" at the end (with error when it failed or
// was canceled). An interrupted pull resumes where it stopped. A model
// with a licence is refused unless acceptLicense says the user accepted
// it (the Models view shows it first).
func (m *Models) Pull(name string, acceptLicense bool) error {
	e, ok := models.Lookup(name)
	if !ok {
		return fmt.Errorf("%q is not in the catalog", name)
	}
	if err := e.CheckLicense(acceptLicense); err != nil {
		return err
	}
	if m.deps.life.closed() {
		return errClosed
	}
	m.mu.Lock()
	if _, busy := m.pulls[name]; busy {
		m.mu.Unlock()
		return fmt.Errorf("%s is already downloading", name)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m.pulls[name] = cancel
	m.wg.Add(1)
	m.mu.Unlock()
	go func() {
		defer m.wg.Done()
		defer cancel()
		path, err := m.dl.Download(ctx, m.deps.store, e.Request(), func(p models.Progress) {
			m.deps.emit.Emit(EventModelsProgress, PullProgress{Name: name, Done: p.Bytes, Total: p.Total, Rate: p.Rate, ETA: p.ETA.Seconds()})
		})
		m.mu.Lock()
		delete(m.pulls, name)
		m.mu.Unlock()
		d := PullDone{Name: name, Path: path}
		if err != nil {
			d.Path, d.Error = "", err.Error()
			if errors.Is(err, context.Canceled) {
				d.Error = "canceled"
			}
		}
		m.deps.emit.Emit(EventModelsDone, d)
	}()
	return nil
}

// Cancel stops a running download (its partial file stays for a resume).
func (m *Models) Cancel(name string) error {
	m.mu.Lock()
	cancel, ok := m.pulls[name]
	m.mu.Unlock()
	if !ok {
		return fmt.Errorf("%s is not downloading", name)
	}
	cancel()
	return nil
}

// Remove deletes an installed model (unloading it first).
func (m *Models) Remove(name string) error {
	if err := models.ValidateName(name); err != nil {
		return err
	}
	m.mu.Lock()
	if cancel, ok := m.pulls[name]; ok {
		cancel()
	}
	m.mu.Unlock()
	if p, err := m.deps.store.Path(name); err == nil {
		m.deps.rt.Drop(p)
	}
	if err := m.deps.store.Remove(name); err != nil {
		return err
	}
	m.deps.emit.Emit(EventModelsChanged, ModelsChange{Removed: name})
	return nil
}

// Import copies an upload (the id /api/upload returned), a Whisper .bin
// or GGUF file, into the models folder and returns its name; files Hark
// cannot run are refused with the reason. The upload is deleted either
// way. Paths are never accepted here (Files.Import is the window's).
func (m *Models) Import(upload string) (string, error) {
	up, err := m.deps.uploads.take(upload)
	if err != nil {
		return "", err
	}
	defer up.discard()
	name, err := m.deps.store.Import(up.path)
	if err != nil {
		// The upload's folder is ours, not the user's: name the file only.
		return "", errors.New(strings.ReplaceAll(err.Error(), up.path, up.name))
	}
	m.deps.emit.Emit(EventModelsChanged, ModelsChange{Imported: name})
	return name, nil
}

// Recommended returns the picks for this machine: the speech model the
// advice gives dictation (its speed, measured or estimated), the chat
// model its memory allows.
func (m *Models) Recommended() (map[string]string, error) {
	adv, err := m.Advice()
	if err != nil {
		return nil, err
	}
	_, c := models.Recommend(models.TotalRAM())
	return map[string]string{"speech": adv.Dictation, "chat": c.Name}, nil
}

func (m *Models) close() {
	m.mu.Lock()
	for _, c := range m.pulls {
		c()
	}
	m.mu.Unlock()
	done := make(chan struct{})
	go func() { m.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
	}
}

// resolveSpeech finds the speech model for arg: a model name or file path,
// "" = the settings' speech model, else the first installed Whisper file.
// It returns the file and the name to record.
func (m *Models) resolveSpeech(arg string) (path, name string, err error) {
	return m.resolve(arg, models.Transcribe)
}

// resolveChat is resolveSpeech for chat models.
func (m *Models) resolveChat(arg string) (path, name string, err error) {
	return m.resolve(arg, models.Chat)
}

func (m *Models) resolve(arg string, task models.Task) (string, string, error) {
	if arg == "" {
		s, err := m.deps.settings.Get()
		if err != nil {
			return "", "", err
		}
		arg = s.SpeechModel
		if task == models.Chat {
			arg = s.ChatModel
		}
	}
	if arg == "" {
		list, err := m.deps.store.List()
		if err != nil {
			return "", "", err
		}
		for _, e := range list {
			if taskOf(e.Path) == task {
				return e.Path, e.Name, nil
			}
		}
		what := "speech (Whisper .bin)"
		if task == models.Chat {
			what = "chat (GGUF)"
		}
		return "", "", fmt.Errorf("no %s model installed: download one in Models or import a file", what)
	}
	// Names only: the services are reachable from the bridge, and a path
	// would let a caller load (and so read and run) any file.
	if !validModelName(arg) {
		return "", "", fmt.Errorf("%q is not an installed model's name (import a file in Models to use it)", arg)
	}
	path, err := m.deps.store.Path(arg)
	if err != nil {
		return "", "", err
	}
	return path, arg, nil
}

// validModelName: "" (the default) or a name the models folder can hold.
func validModelName(s string) bool { return s == "" || models.ValidateName(s) == nil }
