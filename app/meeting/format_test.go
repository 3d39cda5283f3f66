package meeting

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	am "github.com/harkapp/hark/audio/meeting"
	"github.com/harkapp/hark/internal/channels"
)

func sampleNotes() Notes {
	ws := channels.MergeWords([]channels.Word{
		{Speaker: am.Others, Text: "Hello", Start: 1, End: 1.4}, {Speaker: am.Others, Text: "there.", Start: 1.5, End: 2},
		{Speaker: am.You, Text: "Hi!", Start: 1.8, End: 2.1}, // over the call's last word
		{Speaker: am.Others, Text: "Shall", Start: 5, End: 5.3}, {Speaker: am.Others, Text: "we", Start: 5.3, End: 5.5}, {Speaker: am.Others, Text: "start?", Start: 5.5, End: 6},
		{Speaker: am.You, Text: "Yes", Start: 3700, End: 3700.5}, {Speaker: am.You, Text: "*now*", Start: 3700.5, End: 3701},
	})
	return Notes{Title: "Weekly #3", Started: time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC),
		Lines: Lines(ws), Markers: []Marker{{At: 4, Text: "agenda"}}}
}

func render(t *testing.T, n Notes, format string) string {
	var b strings.Builder
	require.NoError(t, n.Write(&b, format))
	return b.String()
}

// TestNotesFormats: speakers, times and markers in every format; an
// overlap shows both sides; transcribed text cannot become markup.
func TestNotesFormats(t *testing.T) {
	n := sampleNotes()
	require.Len(t, n.Lines, 4)
	require.Equal(t, []string{"Others", "You", "Others", "You"}, []string{
		n.Lines[0].Speaker, n.Lines[1].Speaker, n.Lines[2].Speaker, n.Lines[3].Speaker})

	md := render(t, n, FormatMarkdown)
	require.Equal(t, `# Weekly \#3

Sunday 29 November 2026, 09:00

**[00:01] Others:** Hello there.

**[00:01] You:** Hi!

> **[00:04] agenda**

**[00:05] Others:** Shall we start?

**[1:01:40] You:** Yes \*now\*

`, md)

	srt := render(t, n, "srt")
	require.Contains(t, srt, "3\n00:00:05,000 --> 00:00:06,000\nOthers: Shall we start?\n")
	vtt := render(t, n, "vtt")
	require.Contains(t, vtt, "01:01:40.000 --> 01:01:41.000\n<v You>Yes *now*\n")
	require.Contains(t, render(t, n, "txt"), "You: Hi!\n")

	var back Notes
	require.NoError(t, json.Unmarshal([]byte(render(t, n, "json")), &back))
	require.Equal(t, n.Lines, back.Lines)
	require.Error(t, n.Write(&strings.Builder{}, "docx"))

	// A summary heads the Markdown notes, and is kept in the JSON.
	n.Summary = " - They start.\n"
	md = render(t, n, FormatMarkdown)
	require.Contains(t, md, "09:00\n\n## Summary\n\n- They start.\n\n## Transcript\n\n**[00:01] Others:** Hello there.")
	require.NoError(t, json.Unmarshal([]byte(render(t, n, "json")), &back))
	require.Equal(t, n.Summary, back.Summary)
}
