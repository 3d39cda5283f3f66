// Package modes holds dictation modes: named sets of transcription,
// clean-up and output settings, chosen by the application that has the
// focus when a recording starts (or by hand).
package modes

import (
	"fmt"
	"slices"
	"strings"

	"github.com/harkapp/hark/internal/vocab"
)

// Clean-up choices of a mode.
const (
	CleanupOff         = ""
	CleanupPunctuation = "punctuation"
	CleanupEmail       = "email"
	CleanupMessage     = "message"
	CleanupCode        = "code"
	CleanupCustom      = "custom"
)

// Builtin clean-up instructions (the chat model's system prompt).
var Builtin = map[string]string{
	CleanupPunctuation: "Fix only the punctuation and capitalisation of this dictated text. Change no words. Reply with the text only.",
	CleanupEmail: "Turn this dictated text into a clear, polite email body: fix punctuation and capitalisation, remove filler words and false starts, " +
		"split it into short paragraphs. Keep the meaning and the names. Reply with the email body only.",
	CleanupMessage: "Turn this dictated text into a short chat message: fix punctuation, remove filler words and false starts, keep it casual and brief. " +
		"Reply with the message only.",
	CleanupCode: "Turn this dictated text into a concise code comment: plain technical English, identifiers kept exactly as written, " +
		"no comment markers. Reply with the comment text only.",
}

// Mode is a named set of dictation settings. Empty fields take the
// general settings' values.
type Mode struct {
	Name string `json:"name"`
	// Apps choose this mode when one of them has the focus: macOS bundle
	// identifiers ("com.tinyspeck.slackmacgap") or X11 WM_CLASS names
	// ("slack"), matched case-insensitively.
	Apps          []string `json:"apps"`
	Language      string   `json:"language"`   // "" = the settings', "auto", or a Whisper code
	Translate     bool     `json:"translate"`  // into English (multilingual models)
	Model         string   `json:"model"`      // speech model; "" = the settings'
	Vocabulary    string   `json:"vocabulary"` // terms (vocab list text) put before the general ones
	Cleanup       string   `json:"cleanup"`    // "" (off), punctuation, email, message, code, custom
	CleanupPrompt string   `json:"cleanupPrompt"`
	Output        string   `json:"output"` // "" = the settings', paste, type or copy
	AutoEnter     bool     `json:"autoEnter"`
}

// Bounds on what the settings hold.
const (
	MaxModes = 50
	MaxApps  = 50
)

// Validate checks a list of modes; languages and outputs are the valid
// values the settings check with.
func Validate(ms []Mode, languages, outputs []string) error {
	if len(ms) > MaxModes {
		return fmt.Errorf("modes: %d, at most %d", len(ms), MaxModes)
	}
	seen := map[string]bool{}
	for _, m := range ms {
		bad := func(what string, v any) error { return fmt.Errorf("mode %q: %s %v is not valid", m.Name, what, v) }
		name := strings.TrimSpace(m.Name)
		switch {
		case name == "" || len(name) > 60:
			return fmt.Errorf("modes: a mode needs a name (at most 60 bytes)")
		case seen[strings.ToLower(name)]:
			return fmt.Errorf("modes: two modes are named %q", name)
		case len(m.Apps) > MaxApps:
			return bad("apps", len(m.Apps))
		case m.Language != "" && m.Language != "auto" && !slices.Contains(languages, m.Language):
			return bad("language", m.Language)
		case m.Output != "" && !slices.Contains(outputs, m.Output):
			return bad("output", m.Output)
		case m.Cleanup != CleanupOff && m.Cleanup != CleanupCustom && Builtin[m.Cleanup] == "":
			return bad("cleanup", m.Cleanup)
		case m.Cleanup == CleanupCustom && strings.TrimSpace(m.CleanupPrompt) == "":
			return bad("cleanup prompt", `""`)
		case len(m.CleanupPrompt) > 8000 || len(m.Model) > 4096:
			return bad("length", "(too long)")
		}
		seen[strings.ToLower(name)] = true
		for _, a := range m.Apps {
			if a = strings.TrimSpace(a); a == "" || len(a) > 200 {
				return bad("app", fmt.Sprintf("%q", a))
			}
		}
		if _, err := vocab.Parse(m.Vocabulary); err != nil {
			return fmt.Errorf("mode %q: %w", m.Name, err)
		}
	}
	return nil
}

// Choose picks the mode for a recording: the one chosen by hand (manual,
// by name) if any, else the first whose Apps hold the focused app, else
// the default mode (by name). ok is false when none applies: the general
// settings are used as they are.
func Choose(ms []Mode, manual, app, def string) (m Mode, ok bool) {
	if m, ok := Find(ms, manual); ok {
		return m, true
	}
	if app = strings.TrimSpace(app); app != "" {
		for _, m := range ms {
			if slices.ContainsFunc(m.Apps, func(a string) bool { return strings.EqualFold(strings.TrimSpace(a), app) }) {
				return m, true
			}
		}
	}
	return Find(ms, def)
}

// CleanupInstruction is the mode's clean-up prompt ("" = no clean-up).
func (m Mode) CleanupInstruction() string {
	if m.Cleanup == CleanupCustom {
		return m.CleanupPrompt
	}
	return Builtin[m.Cleanup]
}
