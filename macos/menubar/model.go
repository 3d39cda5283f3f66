// Package menubar is Hark's macOS status item: a template-image microphone
// in the menu bar that fills while recording, and its menu (start/stop
// dictation, the dictation mode, recent transcripts, open window, quit).
// The menu model, titles and icon choice are platform independent (this
// file); menubar_darwin.go only mirrors the model into
// NSStatusItem/NSMenu on the main thread.
package menubar

import (
	_ "embed"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Action is what a menu item does when chosen.
type Action int

// Menu actions.
const (
	ActionNone Action = iota
	ActionToggle
	ActionOpen
	ActionRecent // Item.Tag is the index into State.Recent
	ActionQuit
	ActionMode // Item.Tag is 0 for automatic, i+1 for State.Modes[i]
)

// Item is one menu entry; Separator items carry nothing else.
type Item struct {
	Title     string
	Action    Action
	Tag       int
	Enabled   bool
	Separator bool
	Key       string // key equivalent ("q" for Quit), shown with ⌘
	Checked   bool   // shown with a check mark (the mode in force)
	Submenu   []Item
}

// State is what the menu reflects.
type State struct {
	Recording    bool
	Transcribing bool // after a recording, until its text is inserted
	Recent       []string
	// Modes are the dictation modes' names; ActiveMode the one chosen by
	// hand ("" = automatic, by the focused app).
	Modes      []string
	ActiveMode string
}

// MaxRecent caps the recent-transcripts submenu.
const MaxRecent = 10

// maxTitle is the longest recent-transcript title in runes; menus do not
// wrap, so longer text only makes the menu wide.
const maxTitle = 48

//go:embed icons/mic.png
var iconIdle []byte

//go:embed icons/mic-recording.png
var iconRecording []byte

//go:embed icons/mic-transcribing.png
var iconTranscribing []byte

// Icon returns the PNG for the status item: 36x36 px, meant to be shown at
// 18x18 pt as a template image (only alpha matters).
func Icon(s State) []byte {
	switch {
	case s.Recording:
		return iconRecording
	case s.Transcribing:
		return iconTranscribing
	}
	return iconIdle
}

// Tooltip is the status item's hover text.
func Tooltip(s State) string {
	switch {
	case s.Recording:
		return "Hark — recording"
	case s.Transcribing:
		return "Hark — transcribing"
	}
	return "Hark"
}

// Build returns the menu for s.
func Build(s State) []Item {
	toggle := "Start Dictation"
	if s.Recording {
		toggle = "Stop Dictation"
	}
	var recent []Item
	for i, text := range s.Recent {
		if i == MaxRecent {
			break
		}
		recent = append(recent, Item{Title: RecentTitle(text), Action: ActionRecent, Tag: i, Enabled: true})
	}
	if len(recent) == 0 {
		recent = []Item{{Title: "No transcripts yet", Enabled: false}}
	}
	first := Item{Title: toggle, Action: ActionToggle, Enabled: true}
	if s.Transcribing && !s.Recording {
		first = Item{Title: "Transcribing…"}
	}
	items := []Item{
		first,
		{Separator: true},
	}
	if len(s.Modes) > 0 {
		items = append(items, Item{Title: "Mode", Enabled: true, Submenu: modeItems(s)})
	}
	return append(items, []Item{
		{Title: "Recent Transcripts", Enabled: true, Submenu: recent},
		{Title: "Open Hark", Action: ActionOpen, Enabled: true},
		{Separator: true},
		{Title: "Quit Hark", Action: ActionQuit, Enabled: true, Key: "q"},
	}...)
}

// modeItems is the Mode submenu: automatic, then each mode, the one in
// force checked.
func modeItems(s State) []Item {
	found := false
	var ms []Item
	for i, name := range s.Modes {
		on := s.ActiveMode != "" && strings.EqualFold(name, s.ActiveMode)
		found = found || on
		ms = append(ms, Item{Title: RecentTitle(name), Action: ActionMode, Tag: i + 1, Enabled: true, Checked: on})
	}
	auto := Item{Title: "Automatic (by app)", Action: ActionMode, Tag: 0, Enabled: true, Checked: !found}
	return append([]Item{auto, {Separator: true}}, ms...)
}

// ModeAt is the mode a Mode item's tag stands for: "" for automatic, ok
// false for a tag the modes no longer have.
func (s State) ModeAt(tag int) (name string, ok bool) {
	switch {
	case tag == 0:
		return "", true
	case tag < 0 || tag > len(s.Modes):
		return "", false
	}
	return s.Modes[tag-1], true
}

// RecentTitle makes a one-line menu title from a transcript: whitespace
// runs (newlines included) become one space, control characters go, and
// text longer than maxTitle runes ends in an ellipsis at a word boundary
// when one is near.
func RecentTitle(text string) string {
	var b strings.Builder
	space := false
	for _, r := range text {
		switch {
		case unicode.IsSpace(r):
			space = b.Len() > 0
		case unicode.IsControl(r) || r == utf8.RuneError:
		default:
			if space {
				b.WriteByte(' ')
				space = false
			}
			b.WriteRune(r)
		}
	}
	s := b.String()
	if s == "" {
		return "(empty)"
	}
	runes := []rune(s)
	if len(runes) <= maxTitle {
		return s
	}
	cut := maxTitle - 1
	// Prefer to end on a word if a space is within the last quarter.
	for i := cut; i > maxTitle*3/4; i-- {
		if runes[i] == ' ' {
			cut = i
			break
		}
	}
	return strings.TrimRight(string(runes[:cut]), " ") + "…"
}
