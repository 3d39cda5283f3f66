package whisper

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
)

// Output formats of a transcript.
const (
	FormatTXT  = "txt"
	FormatSRT  = "srt"
	FormatVTT  = "vtt"
	FormatJSON = "json"
)

// Formats lists the output formats.
var Formats = []string{FormatTXT, FormatSRT, FormatVTT, FormatJSON}

// timestamp renders seconds as [HH:]MM:SS<mark>mmm, as the reference's
// writers do (hours always for SRT, only when non-zero for VTT).
func timestamp(sec float64, alwaysHours bool, mark string) string {
	ms := int64(math.Round(sec * 1000))
	if ms < 0 {
		ms = 0
	}
	h := ms / 3_600_000
	ms -= h * 3_600_000
	m := ms / 60_000
	ms -= m * 60_000
	s := ms / 1000
	ms -= s * 1000
	if alwaysHours || h > 0 {
		return fmt.Sprintf("%02d:%02d:%02d%s%03d", h, m, s, mark, ms)
	}
	return fmt.Sprintf("%02d:%02d%s%03d", m, s, mark, ms)
}

// cueText is a segment's text for subtitles: trimmed, with the reference's
// escaping of the arrow that would end a cue.
func cueText(s string) string { return strings.ReplaceAll(strings.TrimSpace(s), "-->", "->") }

// Write renders r in format to w.
func Write(w io.Writer, r *Result, format string) error {
	var err error
	switch format {
	case FormatTXT:
		for _, s := range r.Segments {
			if t := strings.TrimSpace(s.Text); t != "" {
				if _, err = fmt.Fprintln(w, t); err != nil {
					return err
				}
			}
		}
	case FormatSRT:
		n := 0
		for _, s := range r.Segments {
			if strings.TrimSpace(s.Text) == "" {
				continue
			}
			n++
			_, err = fmt.Fprintf(w, "%d\n%s --> %s\n%s\n\n", n, timestamp(s.Start, true, ","), timestamp(s.End, true, ","), cueText(s.Text))
			if err != nil {
				return err
			}
		}
	case FormatVTT:
		if _, err = io.WriteString(w, "WEBVTT\n\n"); err != nil {
			return err
		}
		for _, s := range r.Segments {
			if strings.TrimSpace(s.Text) == "" {
				continue
			}
			_, err = fmt.Fprintf(w, "%s --> %s\n%s\n\n", timestamp(s.Start, false, "."), timestamp(s.End, false, "."), cueText(s.Text))
			if err != nil {
				return err
			}
		}
	case FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		return enc.Encode(r)
	default:
		return fmt.Errorf("whisper: unknown output format %q (want one of %s)", format, strings.Join(Formats, ", "))
	}
	return nil
}
