package testaudio

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A call recording whose user's channel is mostly silence: what a
// transcription of its channels must hold whoever runs it (the API's
// channels field, the CLI's --channels).

const (
	callSecs = 10.0
	userAt   = 3.0 // the user's clip, on the second channel
	callClip = "librivox-sense-and-sensibility-0930"
	userClip = "librivox-sense-and-sensibility-0880"
)

// Call writes the recording: the call (Others) on the first channel from
// 0 s; on the second the user (You), silent for 3 s, then a clip, then
// silent to 10 s. The kit model makes memorized sentences up when such
// silence is decoded.
func Call(t testing.TB) string {
	return Stereo(t, callSecs, Clip{Ch: 0, Name: callClip}, Clip{Ch: 1, At: userAt, Name: userClip})
}

// CallSecs is the recording's length.
const CallSecs = callSecs

// Said is a piece of a transcript said by Speaker ("You" or "Others").
type Said struct {
	Speaker, Text string
	Start, End    float64
}

// RequireCall checks a transcript of Call: each side's clip's words as
// its speaker, the user's only where the clip is (nothing in the
// silences).
func RequireCall(t testing.TB, said []Said) {
	end := userAt + float64(len(Load(t, userClip)))/Rate
	text := map[string]string{}
	for _, s := range said {
		text[s.Speaker] += " " + strings.ToLower(strings.TrimSpace(s.Text))
		if s.Speaker == "You" {
			require.True(t, s.Start >= userAt-0.5 && s.End <= end+0.5, "You's %+v where the clip is (%.1f-%.1f s)", s, userAt, end)
		}
	}
	require.Contains(t, text["You"], "he was not an ill disposed young man")
	require.Contains(t, text["Others"], "he might even have been made amiable himself")
	require.Len(t, text, 2)
}
