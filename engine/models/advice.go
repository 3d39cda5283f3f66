package models

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
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
// window's encoder pass of the model Params big took on Backend; or an
// estimate from the machine's description (Machine.Estimate) before any
// speech model is installed.
type Probe struct {
	Model    string  `json:"model"`
	Params   int64   `json:"params"`
	Backend  string  `json:"backend"`
	WindowMs float64 `json:"windowMs"`
	// Estimated is the machine an estimate was made for ("2 cores, AVX2,
	// no GPU"); "" for a measurement.
	Estimated string `json:"estimated,omitempty"`
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

// Basis says where the window times come from, for the advice's reasons.
func (p Probe) Basis() string {
	if p.Estimated != "" {
		return fmt.Sprintf("estimated for %s (%s)", p.Backend, p.Estimated)
	}
	return "on " + p.Backend + " here"
}

// Speed targets of the advice, on the estimated window time: a dictation
// of 10 s is one window and should take under 1 s; files should run at
// least 5x real time, one 30-s window in 6 s. Nothing slower than real
// time, a 30-s window in 30 s, is ever recommended.
const (
	DictationWindowMs = 1000
	FilesWindowMs     = 6000
	RealTimeWindowMs  = 30000
)

// SpeedClass is the task a window time is fast enough for: "dictation",
// "files" or "slow" ("" when unknown). The Models view groups by it.
func SpeedClass(windowMs float64) string {
	switch {
	case !(windowMs > 0):
		return ""
	case windowMs <= DictationWindowMs:
		return "dictation"
	case windowMs <= FilesWindowMs:
		return "files"
	}
	return "slow"
}

// Advice is a recommendation for one task (Name "" when none).
type Advice struct {
	Name   string
	Reason string
}

// moreAccurate ranks two candidates: by the published figures when both
// have one, else by size (a larger Whisper is the more accurate, which
// the figures published agree with); a multilingual model before an
// English-only one of the same size (the language is not known), then
// the lighter file (quantized: as fast here, less memory).
func moreAccurate(a, b CatalogEntry, fa, fb Family) bool {
	if fa.WER > 0 && fb.WER > 0 && fa.WER != fb.WER {
		return fa.WER < fb.WER
	}
	if fa.Params != fb.Params {
		return fa.Params > fb.Params
	}
	if ea, eb := strings.HasSuffix(fa.Family, ".en"), strings.HasSuffix(fb.Family, ".en"); ea != eb {
		return eb
	}
	if a.MemoryMB != b.MemoryMB {
		return a.MemoryMB < b.MemoryMB
	}
	return a.Size < b.Size
}

// AdviseSpeech picks, among the catalog's speech models that fit in
// totalRAM/3, the most accurate (moreAccurate: published figure, else
// size) whose window time meets limitMs; when none does, the fastest, if
// it is faster than real time; else none.
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
	var best, fastest *cand
	for i := range all {
		c := &all[i]
		if fastest == nil || c.ms < fastest.ms || c.ms == fastest.ms && moreAccurate(c.e, fastest.e, c.fam, fastest.fam) {
			fastest = c
		}
		if c.ms <= limitMs && (best == nil || moreAccurate(c.e, best.e, c.fam, best.fam)) {
			best = c
		}
	}
	switch {
	case best != nil && best.fam.WER > 0:
		return Advice{best.e.Name, fmt.Sprintf("the most accurate that meets the %s target, %.1f%% WER on LibriSpeech test-clean; about %s per 30-s window, %s",
			task, best.fam.WER, msText(best.ms), p.Basis())}
	case best != nil:
		return Advice{best.e.Name, fmt.Sprintf("the largest that meets the %s target, with no published accuracy figure (larger Whisper models are the more accurate); about %s per 30-s window, %s",
			task, msText(best.ms), p.Basis())}
	case fastest.ms <= RealTimeWindowMs:
		return Advice{fastest.e.Name, fmt.Sprintf("the fastest: no model meets the %s target (this one takes about %s per 30-s window, %s)", task, msText(fastest.ms), p.Basis())}
	}
	return Advice{"", fmt.Sprintf("none: no model runs faster than real time (the fastest takes about %s per 30-s window, %s)", msText(fastest.ms), p.Basis())}
}

// msText is a window time as the reasons give it.
func msText(ms float64) string {
	if ms >= 1000 {
		return fmt.Sprintf("%.1f s", ms/1000)
	}
	return fmt.Sprintf("%.0f ms", ms)
}
