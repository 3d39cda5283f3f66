package app

import (
	"encoding/json"
	"fmt"
	"net"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/harkapp/hark/app/modes"
	"github.com/harkapp/hark/app/platform"
	"github.com/harkapp/hark/app/store"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/localhttp"
	"github.com/harkapp/hark/internal/rewrite"
	"github.com/harkapp/hark/serve"
)

// SettingsData is every user setting.
type SettingsData struct {
	Hotkey     string `json:"hotkey"`     // "Ctrl+Alt+Space" (mac: "Option+Space")
	HotkeyMode string `json:"hotkeyMode"` // "toggle" | "push"
	// Trigger is a key or mouse button used alone instead of the hotkey
	// ("rightalt", "fn", "mouse8"... see app/trigger; "" = the hotkey),
	// in HotkeyMode; TriggerDoubleTap adds a double tap for hands-free
	// recording (app/trigger_settings.go).
	Trigger           string `json:"trigger"`
	TriggerDoubleTap  bool   `json:"triggerDoubleTap"`
	Language          string `json:"language"` // "auto" or a Whisper code
	SpeechModel       string `json:"speechModel"`
	ChatModel         string `json:"chatModel"`
	OutputMode        string `json:"outputMode"` // "paste" | "copy" | "type"
	RestoreClipboard  bool   `json:"restoreClipboard"`
	Cleanup           bool   `json:"cleanup"` // LLM clean-up of dictated text
	CleanupPrompt     string `json:"cleanupPrompt"`
	AutoStop          bool   `json:"autoStop"` // toggle mode: stop after a pause
	AutoStopMs        int    `json:"autoStopMs"`
	InputDevice       string `json:"inputDevice"` // "" = default
	LaunchAtLogin     bool   `json:"launchAtLogin"`
	ShowMenuBarIcon   bool   `json:"showMenuBarIcon"`
	ShowDockIcon      bool   `json:"showDockIcon"`
	RetentionDays     int    `json:"retentionDays"`     // 0 = forever
	IdleUnloadMinutes int    `json:"idleUnloadMinutes"` // 0 = never unload
	ServerAddr        string `json:"serverAddr"`
	ServerAutoStart   bool   `json:"serverAutoStart"`
	// ServerCORSOrigins lists, space- or comma-separated, the origins
	// whose web pages may call the API server ("" = none).
	ServerCORSOrigins string `json:"serverCorsOrigins"`
	// ServerMaxAudioMinutes bounds the audio one API transcription may
	// hold (0: serve.DefaultMaxAudioDuration): a few MB of low-bitrate
	// audio can hold hours of model time.
	ServerMaxAudioMinutes int    `json:"serverMaxAudioMinutes"`
	Theme                 string `json:"theme"` // "system" | "light" | "dark"
	// Vocabulary, replacements, voice commands and modes (vocabulary.go).
	Vocabulary       string         `json:"vocabulary"`       // one term a line (internal/vocab)
	VocabularyPrompt bool           `json:"vocabularyPrompt"` // terms go into Whisper's prompt
	VocabularyBias   float32        `json:"vocabularyBias"`   // logit bias on terms' first tokens (0 = off)
	Replacements     []rewrite.Rule `json:"replacements"`
	VoiceCommands    bool           `json:"voiceCommands"`
	AutoEnter        bool           `json:"autoEnter"`
	Modes            []modes.Mode   `json:"modes"`
	DefaultMode      string         `json:"defaultMode"` // "" = the settings above
	ActiveMode       string         `json:"activeMode"`  // chosen by hand; "" = by the focused app
	ModeHotkey       string         `json:"modeHotkey"`  // switches to the next mode (modeswitch.go); "" = none
	// The clean-up's bound and "type now, perfect later" (cleanup.go, perfect.go).
	CleanupTimeoutMs int    `json:"cleanupTimeoutMs"` // the clean-up's time limit; 0 = none
	PerfectLater     bool   `json:"perfectLater"`     // re-transcribe in the background and swap
	PerfectModel     string `json:"perfectModel"`     // the larger model; "" = the speech model with beam search
	BetterHotkey     string `json:"betterHotkey"`     // copies the better text offered; "" = none
	// ForceCPU runs models on the CPU even where a GPU backend is
	// available (models loaded from then on).
	ForceCPU bool `json:"forceCPU"`
	// SpeedProbe is this machine's measured speed, which the model advice
	// uses (written by the app; nil until measured).
	SpeedProbe *SpeedProbe `json:"speedProbe,omitempty"`

	// KeepMicReady keeps the input device open while the app runs (the
	// pre-roll catches the moment before the hotkey, but the OS shows the
	// microphone in use all the time). Off, it opens at the hotkey and
	// closes MicCloseSeconds after the last recording (app/micpolicy.go).
	KeepMicReady    bool `json:"keepMicReady"`
	MicCloseSeconds int  `json:"micCloseSeconds"`
	// PasteLastHotkey inserts the last transcript again ("" = none).
	PasteLastHotkey string `json:"pasteLastHotkey"`
	// OverlayPosition is where the recording overlay appears (app/overlay):
	// OverlayBottom or OverlayCaret.
	OverlayPosition string `json:"overlayPosition"`
}

// Where the recording overlay appears: at the bottom centre of the active
// screen, or just below the text cursor of the focused app (where the app
// tells it through accessibility; else at the bottom centre).
const (
	OverlayBottom = "bottom"
	OverlayCaret  = "caret"
)

// DefaultCleanupPrompt is the clean-up instruction when the user has not
// written one.
const DefaultCleanupPrompt = "Clean up this dictated text: fix punctuation and capitalisation, remove filler words " +
	"(um, uh, you know) and false starts. Keep the meaning and wording otherwise. Reply with the cleaned text only."

func defaultSettings() SettingsData {
	hotkey := "Ctrl+Alt+Space"
	if runtime.GOOS == "darwin" {
		hotkey = "Option+Space"
	}
	return SettingsData{
		Hotkey:            hotkey,
		HotkeyMode:        "toggle",
		Language:          "auto",
		OutputMode:        platform.ModePaste,
		RestoreClipboard:  true,
		CleanupPrompt:     DefaultCleanupPrompt,
		AutoStop:          false,
		AutoStopMs:        2000,
		ShowMenuBarIcon:   true,
		ShowDockIcon:      runtime.GOOS != "darwin",
		RetentionDays:     0,
		IdleUnloadMinutes: 10,
		ServerAddr:        serve.DefaultAddr,
		Theme:             "system",
		VocabularyPrompt:  true,
		VoiceCommands:     true,
		Replacements:      []rewrite.Rule{},
		Modes:             []modes.Mode{},
		CleanupTimeoutMs:  1500,
		BetterHotkey:      defaultBetterHotkey(),
		MicCloseSeconds:   10,
		OverlayPosition:   OverlayBottom,
	}
}

// idleUnload is how long a model stays loaded unused (0: forever).
func (d SettingsData) idleUnload() time.Duration {
	return time.Duration(d.IdleUnloadMinutes) * time.Minute
}

// validate checks every field, naming the first bad one.
func (d SettingsData) validate() error {
	bad := func(field string, v any, want string) error {
		return fmt.Errorf("settings: %s %v is not valid (%s)", field, v, want)
	}
	switch {
	case strings.TrimSpace(d.Hotkey) == "":
		return bad("hotkey", `""`, "e.g. Ctrl+Alt+Space")
	case d.HotkeyMode != "toggle" && d.HotkeyMode != "push":
		return bad("hotkeyMode", d.HotkeyMode, "toggle or push")
	case d.Language != "auto" && !slices.Contains(whisper.Languages, d.Language):
		return bad("language", d.Language, "auto or a Whisper language code")
	case d.OutputMode != platform.ModePaste && d.OutputMode != platform.ModeCopy && d.OutputMode != platform.ModeType:
		return bad("outputMode", d.OutputMode, "paste, copy or type")
	case d.AutoStopMs < 0 || d.AutoStopMs > 60_000:
		return bad("autoStopMs", d.AutoStopMs, "0 to 60000")
	case len(d.PasteLastHotkey) > 64 || (d.PasteLastHotkey != "" && slices.ContainsFunc([]string{d.Hotkey, d.ModeHotkey, d.BetterHotkey},
		func(h string) bool { return h != "" && sameHotkey(d.PasteLastHotkey, h) })):
		return bad("pasteLastHotkey", d.PasteLastHotkey, "a key combination other than the dictation, mode and better-text hotkeys")
	case d.MicCloseSeconds < 0 || d.MicCloseSeconds > 3600:
		return bad("micCloseSeconds", d.MicCloseSeconds, "0 to 3600")
	case d.ServerMaxAudioMinutes < 0 || d.ServerMaxAudioMinutes > 24*60:
		return bad("serverMaxAudioMinutes", d.ServerMaxAudioMinutes, "0 (the default, 4 hours) to 1440")
	case d.OverlayPosition != OverlayBottom && d.OverlayPosition != OverlayCaret:
		return bad("overlayPosition", d.OverlayPosition, "bottom or caret")
	case d.RetentionDays < 0 || d.RetentionDays > 36500:
		return bad("retentionDays", d.RetentionDays, "0 (forever) to 36500")
	case d.IdleUnloadMinutes < 0 || d.IdleUnloadMinutes > 10080:
		return bad("idleUnloadMinutes", d.IdleUnloadMinutes, "0 (never) to 10080")
	case d.Theme != "system" && d.Theme != "light" && d.Theme != "dark":
		return bad("theme", d.Theme, "system, light or dark")
	case len(d.CleanupPrompt) > 8000:
		return bad("cleanupPrompt", "(too long)", "at most 8000 bytes")
	}
	if _, port, err := net.SplitHostPort(d.ServerAddr); err != nil || port == "" {
		return bad("serverAddr", d.ServerAddr, "HOST:PORT, e.g. 127.0.0.1:8089")
	}
	if err := d.validateTrigger(); err != nil {
		return err
	}
	if err := d.validateWords(); err != nil {
		return err
	}
	if err := d.validateModeHotkey(); err != nil {
		return err
	}
	if err := d.validateLater(); err != nil {
		return err
	}
	for _, m := range []struct{ field, v string }{{"speechModel", d.SpeechModel}, {"chatModel", d.ChatModel}} {
		// Names only: a path here would let any caller of Settings.Update
		// make the app open a file of its choosing (import files instead).
		if len(m.v) > 255 || !validModelName(m.v) {
			return bad(m.field, m.v, "the name of an installed model, not a path")
		}
	}
	for _, o := range d.corsOrigins() {
		if err := localhttp.CheckOrigin(o); err != nil {
			return bad("serverCorsOrigins", o, "origins such as http://localhost:3000")
		}
	}
	return nil
}

// corsOrigins splits ServerCORSOrigins.
func (d SettingsData) corsOrigins() []string {
	return strings.FieldsFunc(d.ServerCORSOrigins, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' })
}

// Settings is the settings service.
type Settings struct {
	deps settingsDeps
	mu   sync.Mutex
	// switching serialises the mode switches (modeswitch.go).
	switching sync.Mutex
}

// settingsDeps is what Settings uses of the app: the store, the folders
// it reports, which speech model a name means (PromptFit), and what a
// change sets in motion in the other services (Settings.apply).
type settingsDeps struct {
	db                 *store.Store
	emit               Emitter
	dataDir, modelsDir string
	// Made after Settings (New sets them): a change's effects.
	models interface {
		resolveSpeech(arg string) (path, name string, err error)
		settingsChanged(SettingsData) error
	}
	history interface{ ApplyRetention() (int, error) }
}

// settingsReader is what a service reads of the settings.
type settingsReader interface {
	Get() (SettingsData, error)
}

// settingsKey is the row holding the settings as JSON: one document, so
// an update is atomic and fields added later take their defaults.
const settingsKey = "app"

// Get returns the settings (defaults for anything never set).
func (s *Settings) Get() (SettingsData, error) {
	d := defaultSettings()
	raw, ok, err := s.deps.db.Setting(settingsKey)
	if err != nil {
		return d, err
	}
	if ok {
		if err := json.Unmarshal([]byte(raw), &d); err != nil {
			// A damaged row must not lock the user out of the app.
			return defaultSettings(), nil
		}
	}
	return d, nil
}

// Update validates and stores d, and emits "settings:changed" with it.
func (s *Settings) Update(d SettingsData) (SettingsData, error) {
	if err := d.validate(); err != nil {
		return SettingsData{}, err
	}
	s.mu.Lock()
	if d.SpeedProbe == nil { // measured by the app, not set by the UI
		if old, err := s.Get(); err == nil {
			d.SpeedProbe = old.SpeedProbe
		}
	}
	err := s.saveLocked(d)
	s.mu.Unlock()
	if err != nil {
		return SettingsData{}, err
	}
	s.deps.emit.Emit(EventSettingsChanged, d)
	return d, s.apply(d)
}

// apply applies a settings change now, not at the next tick: a shorter
// retention, then what the models make of it (Models.settingsChanged).
func (s *Settings) apply(d SettingsData) error {
	if d.RetentionDays > 0 {
		if _, err := s.deps.history.ApplyRetention(); err != nil {
			return err
		}
	}
	return s.deps.models.settingsChanged(d)
}

// saveLocked stores d; s.mu is held.
func (s *Settings) saveLocked(d SettingsData) error {
	raw, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return s.deps.db.SetSetting(settingsKey, string(raw))
}

// Defaults returns the default settings (for a "reset" button).
func (s *Settings) Defaults() (SettingsData, error) { return defaultSettings(), nil }

// DataDir is the data folder (database and recordings).
func (s *Settings) DataDir() (string, error) { return s.deps.dataDir, nil }

// ModelsDir is the models folder.
func (s *Settings) ModelsDir() (string, error) { return s.deps.modelsDir, nil }
