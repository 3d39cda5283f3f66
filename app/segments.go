package app

import (
	"encoding/json"

	"github.com/harkapp/hark/engine/whisper"
)

// segmentsOf is res's segments, never nil (the UI lists them).
func segmentsOf(res *whisper.Result) []whisper.Segment {
	if res.Segments == nil {
		return []whisper.Segment{}
	}
	return res.Segments
}

// legacySegment is how rows written before the app shared the engine's
// whisper.Segment stored their segments (milliseconds).
type legacySegment struct {
	StartMs *int64 `json:"startMs"`
	EndMs   int64  `json:"endMs"`
	Text    string `json:"text"`
	Words   []struct {
		StartMs int64   `json:"startMs"`
		EndMs   int64   `json:"endMs"`
		Text    string  `json:"text"`
		Prob    float32 `json:"prob"`
	} `json:"words"`
}

// decodeSegments reads an item's stored segments, in either shape; a
// damaged value reads as none (the text is kept apart).
func decodeSegments(raw string) []whisper.Segment {
	var old []legacySegment
	if json.Unmarshal([]byte(raw), &old) == nil && len(old) > 0 && old[0].StartMs != nil {
		out := make([]whisper.Segment, len(old))
		for i, s := range old {
			seg := whisper.Segment{ID: i, Start: float64(*s.StartMs) / 1000, End: float64(s.EndMs) / 1000, Text: s.Text}
			for _, w := range s.Words {
				seg.Words = append(seg.Words, whisper.Word{Word: w.Text, Start: float64(w.StartMs) / 1000,
					End: float64(w.EndMs) / 1000, Probability: float64(w.Prob)})
			}
			out[i] = seg
		}
		return out
	}
	var segs []whisper.Segment
	if err := json.Unmarshal([]byte(raw), &segs); err != nil || segs == nil {
		return []whisper.Segment{}
	}
	return segs
}
