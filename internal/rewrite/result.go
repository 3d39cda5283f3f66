package rewrite

import (
	"strings"

	"github.com/harkapp/hark/engine/whisper"
)

// ApplyResult rewrites a transcription's text and each segment's text
// (for subtitles); word timings keep the words as they were heard.
func (w *Rewriter) ApplyResult(res *whisper.Result) {
	for i := range res.Segments {
		s := &res.Segments[i]
		lead := s.Text[:len(s.Text)-len(strings.TrimLeft(s.Text, " "))]
		s.Text = lead + w.Apply(strings.TrimLeft(s.Text, " "))
	}
	res.Text = w.Apply(res.Text)
}
