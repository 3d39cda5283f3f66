package models

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
)

// accuracy.json holds the published figures the advice ranks Whisper
// models by: accuracy only where a source gives it, with the source.
//
//go:embed accuracy.json
var accuracyJSON []byte

// Family is a Whisper model family's published figures.
type Family struct {
	Family string  `json:"family"`
	Params int64   `json:"params"`
	WER    float64 `json:"wer"`    // LibriSpeech test-clean, %; 0: no published figure found
	Source string  `json:"source"` // where WER was published
}

// Families returns the figures of accuracy.json.
func Families() []Family {
	var doc struct{ Families []Family }
	if err := json.Unmarshal(accuracyJSON, &doc); err != nil {
		panic(err) // the embedded file is checked by the tests
	}
	return doc.Families
}

// FamilyOf returns the family of a Whisper catalog name
// ("whisper-small.en-q5_1" -> "small.en").
func FamilyOf(name string) (Family, bool) {
	f := strings.TrimPrefix(name, "whisper-")
	if i := strings.LastIndex(f, "-q"); i > 0 {
		f = f[:i]
	}
	for _, fam := range Families() {
		if fam.Family == f {
			return fam, true
		}
	}
	return Family{}, false
}

// Probe is one measurement of this machine's speed: how long one 30-s
// window's encoder pass of the model Params big took on Backend.
type Probe struct {
	Model    string  `json:"model"`
	Params   int64   `json:"params"`
	Backend  string  `json:"backend"`
	WindowMs float64 `json:"windowMs"`
}

// Estimate is the window time of a model with params parameters, scaled
// from the probe by parameter count (compute grows with it; quantization
// is not counted).
func (p Probe) Estimate(params int64) float64 {
	if p.Params <= 0 {
		return math.NaN()
	}
	return p.WindowMs * float64(params) / float64(p.Params)
}

// Speed targets of the advice, on the estimated window time: a dictation
// of 10 s is one window and should take under 1 s; files should run at
// least 5x real time, one 30-s window in 6 s.
const (
	DictationWindowMs = 1000
	FilesWindowMs     = 6000
)

// Advice is a recommendation for one task.
type Advice struct {
	Name   string
	Reason string
}

// AdviseSpeech picks, among the catalog's speech models that fit in
// totalRAM/3, the most accurate by published figure whose estimated window
// time meets limitMs, and the fastest when none does. Models without a
// published figure are picked only when no cited model meets the target.
func AdviseSpeech(p Probe, totalRAM int64, limitMs float64, task string) Advice {
	budget := int(totalRAM / 3 / 1e6)
	type cand struct {
		e   CatalogEntry
		fam Family
		ms  float64
	}
	var all []cand
	for _, e := range Catalog() {
		if e.Task != Transcribe || (totalRAM > 0 && e.MemoryMB > budget) {
			continue
		}
		fam, ok := FamilyOf(e.Name)
		if !ok {
			continue
		}
		all = append(all, cand{e, fam, p.Estimate(fam.Params)})
	}
	if len(all) == 0 || p.Params <= 0 {
		return Advice{}
	}
	// Within a family, the smaller file (quantized) is as fast here and
	// lighter; prefer it.
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].ms != all[j].ms {
			return all[i].ms < all[j].ms
		}
		return all[i].e.MemoryMB < all[j].e.MemoryMB
	})
	var best *cand
	for i := range all {
		c := &all[i]
		if c.ms <= limitMs && c.fam.WER > 0 && (best == nil || c.fam.WER < best.fam.WER) {
			best = c
		}
	}
	if best != nil {
		return Advice{best.e.Name, fmt.Sprintf("the most accurate with a published figure (%.1f%% WER on LibriSpeech test-clean) that meets the %s target: about %.0f ms per 30-s window on %s here",
			best.fam.WER, task, best.ms, p.Backend)}
	}
	if all[0].ms <= limitMs {
		return Advice{all[0].e.Name, fmt.Sprintf("meets the %s target (about %.0f ms per 30-s window on %s here); no faster model has a published accuracy figure to rank it", task, all[0].ms, p.Backend)}
	}
	return Advice{all[0].e.Name, fmt.Sprintf("the fastest: no model meets the %s target on %s here (this one takes about %.0f ms per 30-s window)", task, p.Backend, all[0].ms)}
}
