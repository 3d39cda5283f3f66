// Package app holds the desktop app's services: plain Go structs, bound to
// the Wails window and to the HTTP bridge, that know nothing of either.
// Their exported methods take and return JSON-friendly values; progress
// goes out through an Emitter. See README.md for the contract.
package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/harkapp/hark/app/control"
	"github.com/harkapp/hark/app/platform"
	"github.com/harkapp/hark/app/store"
	"github.com/harkapp/hark/engine/models"
	"github.com/harkapp/hark/engine/runtime"
	"github.com/harkapp/hark/engine/whisper"
)

// EnvDataDir overrides the default data folder.
const EnvDataDir = "HARK_DATA"

// Emitter sends an event to the UI. Names are "service:event".
type Emitter interface {
	Emit(name string, data any)
}

// EmitterFunc adapts a function to Emitter.
type EmitterFunc func(name string, data any)

// Emit implements Emitter.
func (f EmitterFunc) Emit(name string, data any) { f(name, data) }

type nopEmitter struct{}

func (nopEmitter) Emit(string, any) {}

// Config is what New needs.
type Config struct {
	// DataDir holds hark.db and recordings/ ("" = DefaultDataDir()).
	DataDir string
	// ModelsDir is the models folder. "": $HARK_MODELS, else
	// <DataDir>/models when $HARK_DATA is set, else models.DefaultDir().
	ModelsDir string
	// Emitter receives events (nil: dropped).
	Emitter Emitter
	// Threads is the size of the CPU worker pool every loaded model shares
	// (0: one per physical core).
	Threads int
	// Recorder captures dictation audio (app/dictation); nil leaves
	// Dictation reporting that capture is unavailable.
	Recorder Recorder
	// Output inserts dictated text into the focused app (platform); nil
	// leaves the text in History only.
	Output platform.Output
	// IdleCheck is how often idle models are looked at (0: 30 s).
	IdleCheck time.Duration
	// NoSpeedProbe skips measuring the machine's speed in the background
	// at start (tests that count model loads).
	NoSpeedProbe bool
	// ChatMaxTokens is the most tokens a chat answer has (0:
	// DefaultChatMaxTokens).
	ChatMaxTokens int
}

// App is the set of services over one data folder.
type App struct {
	Settings      *Settings
	History       *History
	Transcription *Transcription
	Chat          *Chat
	Models        *Models
	Server        *Server
	Dictation     *Dictation
	About         *About
	Updates       *Updates

	dataDir, recDir string
	db              *store.Store
	models          *models.Store
	emit            Emitter
	rt              *runtime.Runtime // the model cache, shared with the API server
	idleForTest     atomic.Int64     // ns; non-zero replaces the idle-unload setting
	// streamForTest tunes the dictation's live stream (zero: the
	// defaults); the loopback test streams the kit model unprompted, as it
	// was trained.
	streamForTest whisper.StreamConfig
	noProbe       bool // Config.NoSpeedProbe
	// Recordings waiting for disk space (app/savefail.go): samples held,
	// and the retry period and writer tests replace.
	unsaved   atomic.Int64
	saveRetry time.Duration
	saveWAV   func(path string, x []float32) error
	uploads   *uploads
	// livePlan is the mode/vocabulary plan of the dictation being recorded,
	// liveUsed the prompt terms its live stream used (app/stream.go).
	livePlan atomic.Pointer[wordPlan]
	liveUsed atomic.Pointer[[]string]
	lock     *os.File // the data folder's (lockDataDir)

	control *control.Server // `hark dictate` (app/control.go); nil when it could not open

	// ctx is the app's lifetime: canceled by Close, it ends work that
	// belongs to no one service (dictation, preloading).
	ctx       context.Context
	cancel    context.CancelFunc
	stop      chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once
}

// DefaultDataDir is $HARK_DATA, else the user's application-support
// folder: ~/Library/Application Support/Hark on macOS,
// $XDG_DATA_HOME/hark (~/.local/share/hark) elsewhere - the parent of the
// default models folder.
func DefaultDataDir() (string, error) {
	if d := os.Getenv(EnvDataDir); d != "" {
		return d, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("app: no home folder: %w", err)
	}
	if goruntime.GOOS == "darwin" {
		return filepath.Join(home, "Library", "Application Support", "Hark"), nil
	}
	if x := os.Getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "hark"), nil
	}
	return filepath.Join(home, ".local", "share", "hark"), nil
}

// New opens the data folder (creating it), recovers what a crash left
// behind (unfinished recordings become pending), applies the retention
// setting, and starts the background work: idle model unloading, daily
// retention, the API server when ServerAutoStart is set.
func New(cfg Config) (*App, error) {
	dir := cfg.DataDir
	if dir == "" {
		d, err := DefaultDataDir()
		if err != nil {
			return nil, err
		}
		dir = d
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	// The history, recordings and uploads are the user's only.
	if err := privateDir(dir); err != nil {
		return nil, fmt.Errorf("app: data folder: %w", err)
	}
	lock, err := lockDataDir(dir)
	if err != nil {
		return nil, err
	}
	unlock := func() {
		if lock != nil {
			lock.Close()
		}
	}
	recDir := filepath.Join(dir, "recordings")
	if err := privateDir(recDir); err != nil {
		unlock()
		return nil, fmt.Errorf("app: data folder: %w", err)
	}
	mdir := cfg.ModelsDir
	if mdir == "" && os.Getenv(models.EnvDir) == "" && os.Getenv(EnvDataDir) != "" {
		mdir = filepath.Join(dir, "models")
	}
	ms, err := models.Open(mdir)
	if err != nil {
		unlock()
		return nil, err
	}
	db, err := store.Open(filepath.Join(dir, "hark.db"))
	if err != nil {
		unlock()
		return nil, err
	}
	a := &App{dataDir: dir, recDir: recDir, db: db, models: ms, emit: cfg.Emitter, stop: make(chan struct{}), lock: lock}
	a.ctx, a.cancel = context.WithCancel(context.Background())
	if a.emit == nil {
		a.emit = nopEmitter{}
	}
	a.uploads = &uploads{dir: filepath.Join(dir, "uploads"), m: map[string]upload{}}
	a.uploads.clear()
	// Models and the model cache are made after Settings: its steps into
	// them are bound late.
	a.Settings = &Settings{deps: settingsDeps{db: db, emit: a.emit, dataDir: dir, modelsDir: ms.Dir,
		speechModel: func(arg string) (string, string, error) { return a.Models.resolveSpeech(arg) },
		apply:       a.applySettings}}
	// The model cache every service shares (idle unloading follows the
	// settings).
	idle := cfg.IdleCheck
	if idle <= 0 {
		idle = 30 * time.Second
	}
	set0, _ := a.Settings.Get()
	a.rt = runtime.New(runtime.Options{Backend: set0.backendChoice(), Threads: cfg.Threads, WhisperBeams: speechBeams,
		Log: logWriter{}, IdleCheck: idle, Idle: func() time.Duration {
			if d := a.idleForTest.Load(); d != 0 {
				return time.Duration(d)
			}
			s, err := a.Settings.Get()
			if err != nil {
				return defaultSettings().idleUnload()
			}
			return s.idleUnload()
		}})
	// Dictation and Transcription are made after History: its steps
	// into them are bound late.
	a.History = &History{deps: historyDeps{db: db, emit: a.emit, recDir: recDir, settings: a.Settings,
		recording: func(id int64) bool { return a.Dictation.recording(id) },
		cancelJob: func(id int64) { a.Transcription.cancelAndWait(id) },
		enqueue:   func(id int64, model string) (Job, error) { return a.Transcription.enqueue(id, model) }}}
	a.Models = &Models{deps: modelsDeps{settings: a.Settings, machine: runtime.ThisMachine, store: ms, rt: a.rt, emit: a.emit, uploads: a.uploads, closed: a.closed},
		dl: models.NewDownloader(2), pulls: map[string]context.CancelFunc{}}
	a.Transcription = newTranscription(transcriptionDeps{db: db, emit: a.emit, recDir: recDir, uploads: a.uploads,
		models: a.Models, history: a.History, transcribe: a.transcribeItem, closed: a.closed})
	a.Chat = newChat(chatDeps{db: db, emit: a.emit, settings: a.Settings, models: a.Models, history: a.History,
		withChat: a.withChat, closed: a.closed, maxTokens: cmp.Or(cfg.ChatMaxTokens, DefaultChatMaxTokens)})
	a.Dictation = &Dictation{rec: cfg.Recorder, out: cfg.Output, deps: dictationDeps{
		ctx: a.ctx, emit: a.emit, settings: a.Settings, history: a.History,
		preload: a.preloadSpeech, live: &a.livePlan, transcribe: a.finishDictation,
		cleanup: a.Chat.cleanup, keepUnsaved: a.keepUnsaved,
		chat: a.Chat, cleanBounded: a.cleanBounded, preloadChat: a.preloadChat,
		transcribeBatch: func(ctx context.Context, id int64, q *wordPlan) (Item, error) {
			return a.transcribeWith(ctx, id, "", nil, speechBeams, runtime.Batch, nil, q)
		},
		background: a.background,
	}}
	a.Server = &Server{deps: serverDeps{settings: a.Settings, emit: a.emit, models: ms, rt: a.rt, closed: a.closed}}
	a.About = &About{}
	a.Updates = newUpdates(dir, a.emit)
	a.livePreview(cfg.Recorder)

	if err := a.recover(); err != nil {
		a.rt.Close()
		db.Close()
		unlock()
		return nil, err
	}
	if _, err := a.History.ApplyRetention(); err != nil {
		a.rt.Close()
		db.Close()
		unlock()
		return nil, err
	}
	a.Transcription.start()
	a.every(24*time.Hour, func() { a.History.ApplyRetention() })
	a.updateChecks()

	s, err := a.Settings.Get()
	if err != nil {
		a.Close()
		return nil, err
	}
	if !cfg.NoSpeedProbe {
		a.probeSpeed()
	}
	a.noProbe = cfg.NoSpeedProbe
	a.startControl()
	if s.ServerAutoStart {
		// A port taken by another program must not keep the app from
		// opening: the failure shows in the server's status instead.
		a.Server.Start(s.ServerAddr)
	}
	return a, nil
}

// every runs f every d until Close.
func (a *App) every(d time.Duration, f func()) {
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-a.stop:
				return
			case <-t.C:
				f()
			}
		}
	}()
}

// Services lists the structs the UI binds (Wails Bind list, bridge
// registry).
func (a *App) Services() []any {
	return []any{a.Settings, a.History, a.Transcription, a.Chat, a.Models, a.Server, a.Dictation, a.About, a.Updates}
}

// DataDir is the data folder.
func (a *App) DataDir() string { return a.dataDir }

// RecordingsDir is where recordings are written.
func (a *App) RecordingsDir() string { return a.recDir }

// ModelsDir is the models folder.
func (a *App) ModelsDir() string { return a.models.Dir }

// Close stops the background work, cancels running jobs and generation,
// stops the API server, unloads the models and closes the database.
func (a *App) Close() error {
	var err error
	a.closeOnce.Do(func() {
		close(a.stop)
		a.cancel()
		if a.control != nil {
			a.control.Close() // commands from now on are refused (ControlCommand)
		}
		a.Dictation.close()
		a.Transcription.close()
		a.Chat.close()
		a.Models.close()
		a.Server.Stop()
		a.wg.Wait()
		a.rt.Close()
		err = a.db.Close()
		if a.lock != nil {
			a.lock.Close()
		}
	})
	return err
}

// errClosed is returned by calls made after Close.
var errClosed = errors.New("app: closed")

func (a *App) closed() bool {
	select {
	case <-a.stop:
		return true
	default:
		return false
	}
}
