package desktop

import "github.com/harkapp/hark/app"

// The window's own events (the services' are app.Events).
const (
	// EventView asks the page to show a view ("history", "files", "settings").
	EventView = "app:view"
	// EventError shows an error from a hotkey or menu action.
	EventError = "app:error"
	// EventFileError: a dropped file could not be queued.
	EventFileError = "transcription:error"
)

// Problem is the payload of EventError.
type Problem struct {
	Error string `json:"error"`
}

// FileProblem is the payload of EventFileError.
type FileProblem struct {
	Name  string `json:"name"`
	Error string `json:"error"`
}

// Events lists the window's events with their payload types, for the
// generated client (app/apigen).
var Events = []app.Event{
	{Name: EventView, Payload: ""},
	{Name: EventError, Payload: Problem{}},
	{Name: EventFileError, Payload: FileProblem{}},
}
