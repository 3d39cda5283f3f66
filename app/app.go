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
	"log"
	"os"
	"path/filepath"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/harkapp/hark/app/control"
	"github.com/harkapp/hark/app/platform"
	"github.com/harkapp/hark/app/store"
	am "github.com/harkapp/hark/audio/meeting"
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
	// MeetingCapture picks a meeting's devices (zero: the default input
	// and the default output's monitor; tests inject theirs).
	MeetingCapture am.CaptureConfig
	// MeetingStream tunes meetings' transcription, live and final (zero:
	// the defaults; tests turn off the prompt the kit model never learnt).
	MeetingStream whisper.StreamConfig
}

// App is the set of services over one data folder. It owns their
// lifecycle and wiring only: every flow lives in the service it belongs
// to, and no service holds the App (app_test.go checks both).
type App struct {
	Settings      *Settings
	History       *History
	Transcription *Transcription
	Chat          *Chat
	Models        *Models
	Server        *Server
	Dictation     *Dictation
	Meetings      *Meetings
	About         *About
	Updates       *Updates
	// Files is the Go-only way in for files (the window's paths, the
	// bridge's uploads): never bound to the page.
	Files *Files

	dataDir, recDir string
	db              *store.Store
	models          *models.Store
	rt              *runtime.Runtime // the model cache, shared with the API server
	idleForTest     atomic.Int64     // ns; non-zero replaces the idle-unload setting
	lock            *os.File         // the data folder's (lockDataDir)

	control *control.Server // `hark dictate` (app/control.go); nil when it could not open

	life      *lifetime
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
	emit := cfg.Emitter
	if emit == nil {
		emit = nopEmitter{}
	}
	life := newLifetime()
	a := &App{dataDir: dir, recDir: recDir, db: db, models: ms, lock: lock, life: life}
	up := &uploads{dir: filepath.Join(dir, "uploads"), m: map[string]upload{}}
	up.clear()

	// Services are made in dependency order; the few steps into a service
	// made later are set once it exists, as method values of services.
	settings := &Settings{deps: settingsDeps{db: db, emit: emit, dataDir: dir, modelsDir: ms.Dir}}
	// The model cache every service shares (idle unloading follows the
	// settings).
	idle := cfg.IdleCheck
	if idle <= 0 {
		idle = 30 * time.Second
	}
	set0, _ := settings.Get()
	a.rt = runtime.New(runtime.Options{Backend: set0.backendChoice(), Threads: cfg.Threads, WhisperBeams: speechBeams,
		Log: logWriter{}, IdleCheck: idle, Idle: idleUnload(settings, &a.idleForTest)})
	history := &History{deps: historyDeps{db: db, emit: emit, recDir: recDir, settings: settings,
		meetingsRoot: filepath.Join(dir, "meetings")}}
	mods := &Models{deps: modelsDeps{settings: settings, machine: runtime.ThisMachine, store: ms, rt: a.rt, emit: emit,
		uploads: up, life: life, noProbe: cfg.NoSpeedProbe},
		dl: models.NewDownloader(2), pulls: map[string]context.CancelFunc{}}
	settings.deps.models, settings.deps.history = mods, history
	trans := newTranscription(transcriptionDeps{db: db, emit: emit, recDir: recDir, uploads: up,
		models: mods, history: history, settings: settings, closed: life.closed})
	chat := newChat(chatDeps{db: db, emit: emit, settings: settings, models: mods, history: history,
		withChat: mods.withChat, closed: life.closed, maxTokens: cmp.Or(cfg.ChatMaxTokens, DefaultChatMaxTokens)})
	dict := &Dictation{rec: cfg.Recorder, out: cfg.Output, rev: time.Now().UnixMicro(), deps: dictationDeps{
		life: life, emit: emit, settings: settings, history: history,
		models: mods, transcription: trans, chat: chat,
	}}
	history.deps.recording, history.deps.cancelJob, history.deps.enqueue = dict.recording, trans.cancelAndWait, trans.enqueue
	a.Settings, a.History, a.Models, a.Transcription, a.Chat, a.Dictation = settings, history, mods, trans, chat, dict
	a.Server = &Server{deps: serverDeps{settings: settings, emit: emit, models: ms, rt: a.rt, closed: life.closed}}
	a.About = &About{}
	a.Updates = newUpdates(dir, emit)
	a.Files = &Files{deps: filesDeps{db: db, emit: emit, store: ms, uploads: up, models: mods, transcription: trans}}
	dict.livePreview(cfg.Recorder)

	if err := history.recover(); err != nil {
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
	trans.start()
	life.every(24*time.Hour, func() {
		if _, err := history.ApplyRetention(); err != nil {
			log.Printf("hark: applying the history retention (tried again tomorrow): %v", err)
		}
	})
	a.Updates.checkUntilClose(life)

	s, err := a.Settings.Get()
	if err != nil {
		a.Close()
		return nil, err
	}
	if !cfg.NoSpeedProbe {
		mods.probeSpeed()
	}
	a.Meetings = newMeetings(cfg.MeetingStream, meetingsDeps{root: history.deps.meetingsRoot, settings: settings, models: mods,
		speech: a.rt.Speech, capture: cfg.MeetingCapture, closed: life.closed, emit: emit, life: life, history: history, summarizer: chat})
	history.deps.cancelMeeting, history.deps.finishMeeting = a.Meetings.cancelPass, a.Meetings.finishAgain
	a.control = startControl(dir, controlRouter{dict: dict, meet: a.Meetings}.run)
	if s.ServerAutoStart {
		// A port taken by another program must not keep the app from
		// opening: the failure shows in the server's status instead.
		_, _ = a.Server.Start(s.ServerAddr)
	}
	return a, nil
}

// Services lists the structs the UI binds (Wails Bind list, bridge
// registry).
func (a *App) Services() []any {
	return []any{a.Settings, a.History, a.Transcription, a.Chat, a.Models, a.Server, a.Dictation, a.Meetings, a.About, a.Updates}
}

// DataDir is the data folder.
func (a *App) DataDir() string { return a.dataDir }

// RecordingsDir is where recordings are written.
func (a *App) RecordingsDir() string { return a.recDir }

// ModelsDir is the models folder.
func (a *App) ModelsDir() string { return a.models.Dir }

// SetRecorder plugs in the capture pipeline when it is built after New.
// (On App, not Dictation: the UI binds Dictation's methods.)
func (a *App) SetRecorder(r Recorder) { a.Dictation.setRecorder(r) }

// SetOutput plugs in the platform's text output.
func (a *App) SetOutput(o platform.Output) { a.Dictation.setOutput(o) }

// SetFocus plugs in what reports the focused app, by which dictation
// chooses its mode.
func (a *App) SetFocus(f platform.Focus) { a.Dictation.setFocus(f) }

// SetTextField plugs in what edits the focused text field (macOS); nil
// (Linux) offers every better text instead of replacing it.
func (a *App) SetTextField(f platform.TextField) { a.Dictation.setTextField(f) }

// Close stops the background work, cancels running jobs and generation,
// stops the API server, unloads the models and closes the database.
func (a *App) Close() error {
	var err error
	a.closeOnce.Do(func() {
		a.life.end()
		if a.control != nil {
			a.control.Close() // commands from now on are refused (ControlCommand)
		}
		a.Dictation.close()
		if a.Meetings != nil {
			a.Meetings.close()
		}
		a.Transcription.close()
		a.Chat.close()
		a.Models.close()
		_, _ = a.Server.Stop() // it only ever reports its status
		a.life.wg.Wait()
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

// idleUnload is how long a model stays loaded unused: the setting, unless
// a test put in its own.
func idleUnload(s settingsReader, override *atomic.Int64) func() time.Duration {
	return func() time.Duration {
		if d := override.Load(); d != 0 {
			return time.Duration(d)
		}
		set, err := s.Get()
		if err != nil {
			return defaultSettings().idleUnload()
		}
		return set.idleUnload()
	}
}
