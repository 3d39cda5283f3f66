package meeting

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	am "github.com/harkapp/hark/audio/meeting"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/channels"
	"github.com/harkapp/hark/internal/speakers"
)

// Line is one speaker's run of words.
type Line struct {
	Speaker string          `json:"speaker"`
	Start   float64         `json:"start"`
	End     float64         `json:"end"`
	Text    string          `json:"text"`
	Words   []channels.Word `json:"words,omitempty"`
}

// lineGap is the pause that starts a new line within one speaker's
// words; maxLine bounds a line (subtitles stay readable).
const (
	lineGap = 1.5
	maxLine = 20.0
)

// Lines groups words into speaker lines, ordered by start: each side's
// words run on into one line until a pause or a long line, whatever the
// other side says meanwhile, so talking at once shows as two lines.
func Lines(ws []channels.Word) []Line {
	var out []Line
	var cur [am.Channels]int // each speaker's open line in out, +1
	for _, w := range ws {
		if k := cur[w.Speaker] - 1; k >= 0 {
			l := &out[k]
			if w.Start-l.End <= lineGap && w.End-l.Start <= maxLine {
				l.End = max(l.End, w.End)
				l.Text += " " + w.Text
				l.Words = append(l.Words, w)
				continue
			}
		}
		out = append(out, Line{Speaker: am.Names[w.Speaker], Start: w.Start, End: w.End, Text: w.Text, Words: []channels.Word{w}})
		cur[w.Speaker] = len(out)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

// Output formats of meeting notes, beside whisper's txt, srt, vtt, json.
const FormatMarkdown = "md"

// Formats lists the meeting output formats.
var Formats = append([]string{FormatMarkdown}, whisper.Formats...)

// Notes is a meeting's transcript for output.
type Notes struct {
	Title   string    `json:"title"`
	Started time.Time `json:"started"`
	Lines   []Line    `json:"lines"`
	Markers []Marker  `json:"markers,omitempty"`
	// Final: the lines come from the pass over the recording after the
	// meeting, not the live transcript.
	Final bool `json:"final,omitempty"`
	// Summary is the chat model's summary of the lines, asked for after
	// the meeting (Markdown, as the model writes it).
	Summary string `json:"summary,omitempty"`
}

// maxNotes bounds a transcript.json read back (hours of words).
const maxNotes = 64 << 20

// ReadNotes reads notes written in FormatJSON.
func ReadNotes(r io.Reader) (Notes, error) {
	var n Notes
	b, err := io.ReadAll(io.LimitReader(r, maxNotes+1))
	if err != nil {
		return n, err
	}
	if len(b) > maxNotes {
		return n, errors.New("meeting: the notes are too large")
	}
	if err := json.Unmarshal(b, &n); err != nil {
		return n, fmt.Errorf("meeting: notes: %w", err)
	}
	return n, nil
}

// clock renders seconds as [H:]MM:SS.
func clock(sec float64) string {
	s := int64(math.Max(0, math.Floor(sec)))
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%02d:%02d", s/60, s%60)
}

// Write renders n in format: Markdown notes with speakers, timestamps and
// markers; JSON with the words; srt, vtt and txt through whisper's
// writers, each cue naming its speaker (a WebVTT voice tag in vtt).
func (n Notes) Write(w io.Writer, format string) error {
	switch format {
	case FormatMarkdown:
		return n.markdown(w)
	case whisper.FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(n)
	}
	r := &whisper.Result{Language: "en"}
	for i, l := range n.Lines {
		text := speakers.Cue(l.Speaker, l.Text, format == whisper.FormatVTT)
		r.Segments = append(r.Segments, whisper.Segment{ID: i, Start: l.Start, End: l.End, Text: text})
	}
	return whisper.Write(w, r, format)
}

func (n Notes) markdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", mdEscape(n.Title))
	if !n.Started.IsZero() {
		fmt.Fprintf(&b, "%s\n\n", n.Started.Format("Monday 2 January 2006, 15:04"))
	}
	if sum := strings.TrimSpace(n.Summary); sum != "" {
		fmt.Fprintf(&b, "## Summary\n\n%s\n\n## Transcript\n\n", sum)
	}
	m := 0
	for _, l := range n.Lines {
		for ; m < len(n.Markers) && n.Markers[m].At <= l.Start; m++ {
			fmt.Fprintf(&b, "> **[%s] %s**\n\n", clock(n.Markers[m].At), mdEscape(n.Markers[m].Text))
		}
		fmt.Fprintf(&b, "**[%s] %s:** %s\n\n", clock(l.Start), l.Speaker, mdEscape(l.Text))
	}
	for ; m < len(n.Markers); m++ {
		fmt.Fprintf(&b, "> **[%s] %s**\n\n", clock(n.Markers[m].At), mdEscape(n.Markers[m].Text))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdEscape keeps transcribed text from becoming Markdown markup.
func mdEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, "*", `\*`, "_", `\_`, "`", "\\`", "#", `\#`, "<", "&lt;", ">", "&gt;", "[", `\[`, "]", `\]`)
	return r.Replace(strings.TrimSpace(s))
}
