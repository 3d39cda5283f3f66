package desktop

import "github.com/harkapp/hark/app"

// The window's own events (the services' are app.Events).
const (
	// EventView asks the page to show a view ("history", "files", "settings").
	EventView = "app:view"
	// EventFileError: a dropped file could not be queued.
	EventFileError = "transcription:error"
)

// FileProblem is the payload of EventFileError.
type FileProblem struct {
	Name  string `json:"name"`
	Error string `json:"error"`
}

// Events lists the window's events with their payload types, for the
// generated client (app/apigen).
var Events = []app.Event{
	{Name: EventView, Payload: ""},
	{Name: EventFileError, Payload: FileProblem{}},
}
