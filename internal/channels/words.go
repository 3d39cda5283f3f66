package channels

import (
	"sort"
	"strings"

	"github.com/harkapp/hark/engine/whisper"
)

// Word is a transcribed word on a recording's timeline (seconds from its
// start), with its speaker (speakers.You or speakers.Others).
type Word struct {
	Speaker int     `json:"speaker"`
	Text    string  `json:"text"`
	Start   float64 `json:"start"`
	End     float64 `json:"end"`
}

// ResultWords returns a transcript's words from the k-th on as speaker's,
// their times mapped by at (nil: as they are).
func ResultWords(res *whisper.Result, speaker, k int, at func(float64) float64) []Word {
	if at == nil {
		at = func(t float64) float64 { return t }
	}
	var out []Word
	i := 0
	for _, seg := range res.Segments {
		for _, w := range seg.Words {
			if i >= k && strings.TrimSpace(w.Word) != "" {
				out = append(out, Word{Speaker: speaker, Text: strings.TrimSpace(w.Word), Start: at(w.Start), End: at(w.End)})
			}
			i++
		}
	}
	return out
}

// CountWords is the number of words in res (ResultWords's k counts them).
func CountWords(res *whisper.Result) int {
	n := 0
	for _, s := range res.Segments {
		n += len(s.Words)
	}
	return n
}

// MergeWords orders words by start time (the microphone first on a tie).
func MergeWords(ws []Word) []Word {
	sort.SliceStable(ws, func(i, j int) bool {
		if ws[i].Start != ws[j].Start {
			return ws[i].Start < ws[j].Start
		}
		return ws[i].Speaker < ws[j].Speaker
	})
	return ws
}
