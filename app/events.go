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
	EventMeetingStatus         = "meeting:status"
	EventMeetingLines          = "meeting:lines"
	EventMeetingProgress       = "meeting:progress"
	// EventError shows an error no call returned (a hotkey's, a background
	// pass's) in the window.
	EventError = "app:error"
)

// Problem is the payload of EventError.
type Problem struct {
	Error string `json:"error"`
}

// DeletedItem is the payload of EventHistoryDeleted.
type DeletedItem struct {
	ID int64 `json:"id"`
}

// ModelsChange is the payload of EventModelsChanged: the one model that was
// imported, removed or speed-probed.
type ModelsChange struct {
	Imported string `json:"imported,omitempty"`
	Removed  string `json:"removed,omitempty"`
	Probed   string `json:"probed,omitempty"`
}

// PartialText is the payload of EventDictationPartial. A batch preview
// sets Text only; the live stream also splits it into the Committed text,
// which no later event changes, and the Tentative rest.
type PartialText struct {
	Text      string `json:"text"`
	Committed string `json:"committed,omitempty"`
	Tentative string `json:"tentative,omitempty"`
}

// Warning is the payload of EventDictationWarning: news that doesn't stop
// the recording (a device changed, a save failed).
type Warning struct {
	Message string `json:"message"`
}

// CanceledItem is the payload of EventDictationCanceled: the history item
// the canceled recording was saved as.
type CanceledItem struct {
	ItemID int64 `json:"itemId"`
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
	{EventHistoryDeleted, DeletedItem{}},
	{EventTranscriptionQueued, Job{}},
	{EventTranscriptionProgress, Progress{}},
	{EventTranscriptionDone, Job{}},
	{EventChatToken, ChatToken{}},
	{EventChatDone, ChatDone{}},
	{EventModelsProgress, PullProgress{}},
	{EventModelsDone, PullDone{}},
	{EventModelsChanged, ModelsChange{}},
	{EventServerStatus, ServerStatus{}},
	{EventDictationState, DictationStatus{}},
	{EventDictationLevel, Level{}},
	{EventDictationPartial, PartialText{}},
	{EventDictationDone, Item{}},
	{EventDictationWarning, Warning{}},
	{EventUpdateAvailable, UpdateState{}},
	{EventDictationCleanup, CleanupEvent{}},
	{EventDictationBetter, BetterText{}},
	{EventBetterWithdrawn, BetterText{}},
	{EventBetterCopied, BetterText{}},
	{EventModeChanged, ModeChoice{}},
	{EventDictationCanceled, CanceledItem{}},
	{EventMeetingStatus, MeetingStatus{}},
	{EventMeetingLines, MeetingLines{}},
	{EventMeetingProgress, PassProgress{}},
	{EventError, Problem{}},
}
