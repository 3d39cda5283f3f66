package app

// Event names ("service:event"), defined once: the services emit these
// constants, and the UI's names and payload types are generated from
// Events (go generate ./app/apigen writes frontend/src/lib/api.gen.ts).
const (
	EventSettingsChanged       = "settings:changed"
	EventHistoryChanged        = "history:changed"
	EventHistoryDeleted        = "history:deleted"
	EventTranscriptionQueued   = "transcription:queued"
	EventTranscriptionProgress = "transcription:progress"
	EventTranscriptionDone     = "transcription:done"
	EventChatToken             = "chat:token"
	EventChatDone              = "chat:done"
	EventModelsProgress        = "models:progress"
	EventModelsDone            = "models:done"
	EventModelsChanged         = "models:changed"
	EventServerStatus          = "server:status"
	EventDictationState        = "dictation:state"
	EventDictationLevel        = "dictation:level"
	EventDictationPartial      = "dictation:partial"
	EventDictationDone         = "dictation:done"
	EventDictationWarning      = "dictation:warning"
	EventUpdateAvailable       = "update:available"
	EventDictationCleanup      = "dictation:cleanup"
	EventDictationBetter       = "dictation:better"
	EventBetterWithdrawn       = "dictation:better-withdrawn"
	EventBetterCopied          = "dictation:better-copied"
	EventModeChanged           = "mode:changed"
	EventDictationCanceled     = "dictation:canceled"
	// EventError shows an error no call returned (a hotkey's, a background
	// pass's) in the window.
	EventError = "app:error"
)

// Problem is the payload of EventError.
type Problem struct {
	Error string `json:"error"`
}

// Event is one event the UI can listen to: its name and a value of its
// payload's type.
type Event struct {
	Name    string
	Payload any
}

// Events lists the services' events with their payload types.
var Events = []Event{
	{EventSettingsChanged, SettingsData{}},
	{EventHistoryChanged, Item{}},
	{EventHistoryDeleted, map[string]any{}}, // {id}
	{EventTranscriptionQueued, Job{}},
	{EventTranscriptionProgress, Progress{}},
	{EventTranscriptionDone, Job{}},
	{EventChatToken, ChatToken{}},
	{EventChatDone, ChatDone{}},
	{EventModelsProgress, PullProgress{}},
	{EventModelsDone, PullDone{}},
	{EventModelsChanged, map[string]any{}}, // {imported|removed|probed: name}
	{EventServerStatus, ServerStatus{}},
	{EventDictationState, DictationStatus{}},
	{EventDictationLevel, Level{}},
	{EventDictationPartial, map[string]string{}}, // {text} or the stream's {text, committed, tentative}
	{EventDictationDone, Item{}},
	{EventDictationWarning, map[string]string{}}, // {message}
	{EventUpdateAvailable, UpdateState{}},
	{EventDictationCleanup, CleanupEvent{}},
	{EventDictationBetter, BetterText{}},
	{EventBetterWithdrawn, BetterText{}},
	{EventBetterCopied, BetterText{}},
	{EventModeChanged, ModeChoice{}},
	{EventDictationCanceled, map[string]int64{}}, // {itemId}
	{EventError, Problem{}},
}
