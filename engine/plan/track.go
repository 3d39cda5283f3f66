package plan

// The words of WhisperTrack's state (the first TrackHeader words of its
// track binding) and its status values.
const (
	TrackStatus   = iota // one of the Track* statuses below
	TrackKept            // tokens kept (after a repetition cut)
	TrackSteps           // selections made, the last (end of text) included: log-probabilities written
	TrackNoSpeech        // the no-speech log-probability (float32 bits)
	TrackLimit           // the most tokens kept
	TrackEndTs           // the end timestamp (0: none)
)

// WhisperTrack statuses: running, or why the window stopped.
const (
	TrackRunning      = iota
	TrackEOT          // end of text chosen
	TrackLimitReached // the token limit
	TrackEndTimestamp // a timestamp at or past the end timestamp
	TrackRepeated     // a repetition loop (cut to its first occurrence)
)
