package app

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/harkapp/hark/app/modes"
	"github.com/harkapp/hark/app/platform"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/rewrite"
	"github.com/harkapp/hark/internal/vocab"
)

// validateWords checks the vocabulary, replacement and mode settings.
func (d SettingsData) validateWords() error {
	if _, err := vocab.Parse(d.Vocabulary); err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	if d.VocabularyBias < -10 || d.VocabularyBias > 10 {
		return fmt.Errorf("settings: vocabularyBias %g is not valid (-10 to 10; 0 = off)", d.VocabularyBias)
	}
	if err := rewrite.Validate(d.Replacements); err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	outputs := []string{platform.ModePaste, platform.ModeCopy, platform.ModeType}
	if err := modes.Validate(d.Modes, whisper.Languages, outputs); err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	for _, m := range []struct{ field, v string }{{"defaultMode", d.DefaultMode}, {"activeMode", d.ActiveMode}} {
		if m.v != "" && !slices.ContainsFunc(d.Modes, func(x modes.Mode) bool { return strings.EqualFold(x.Name, m.v) }) {
			return fmt.Errorf("settings: %s %q names no mode", m.field, m.v)
		}
	}
	return nil
}

// wordPlan is what one transcription does with the user's words: the
// mode chosen, how Whisper is steered, and what happens to the text.
type wordPlan struct {
	mode      string // "" = no mode
	app       string // the focused app the mode was chosen for
	language  string // "auto" or a code
	translate bool
	model     string
	terms     []vocab.Term
	prompt    bool
	bias      float32
	cleanup   string // the clean-up instruction; "" = none
	// cleanupLimit bounds the clean-up (0 = none).
	cleanupLimit time.Duration
	output       string
	autoEnter    bool
	rw           *rewrite.Rewriter
}

// planFor resolves the settings, and the mode chosen for the focused app
// (dictation) or none (files: mode false), into a plan.
func planFor(set SettingsData, app string, mode bool) (*wordPlan, error) {
	p := &wordPlan{app: app, language: set.Language, prompt: set.VocabularyPrompt, bias: set.VocabularyBias,
		output: set.OutputMode, autoEnter: set.AutoEnter, cleanupLimit: time.Duration(set.CleanupTimeoutMs) * time.Millisecond}
	if set.Cleanup {
		p.cleanup = set.CleanupPrompt
		if strings.TrimSpace(p.cleanup) == "" {
			p.cleanup = DefaultCleanupPrompt
		}
	}
	global, err := vocab.Parse(set.Vocabulary)
	if err != nil {
		return nil, err
	}
	p.terms = global
	if mode {
		if m, ok := modes.Choose(set.Modes, set.ActiveMode, app, set.DefaultMode); ok {
			mine, err := vocab.Parse(m.Vocabulary)
			if err != nil {
				return nil, err
			}
			p.mode, p.translate, p.model, p.autoEnter = m.Name, m.Translate, m.Model, m.AutoEnter
			p.terms = vocab.Merge(mine, global) // the mode's terms are the most relevant
			if m.Language != "" {
				p.language = m.Language
			}
			if m.Output != "" {
				p.output = m.Output
			}
			if m.Cleanup != modes.CleanupOff {
				p.cleanup = m.CleanupInstruction()
			}
		}
	}
	p.rw, err = rewrite.New(rewrite.Options{Vocabulary: p.terms, Rules: set.Replacements, Commands: set.VoiceCommands && mode})
	return p, err
}

// steer sets opt for the plan with the model's tokenizer and returns the
// terms that went into the prompt.
func (p *wordPlan) steer(opt *whisper.TranscribeOptions, f *whisper.File) []string {
	if p.language != "" && p.language != "auto" {
		opt.Language = p.language
	}
	if p.translate && f.H.Multilingual() {
		opt.Task = "translate"
	}
	if !f.H.Multilingual() {
		opt.Language = "en"
	}
	budget := 0
	if p.prompt {
		budget = vocab.PromptTokens
	}
	return vocab.Steer(opt, f.Vocab, p.terms, budget, p.bias).Used
}

// setFocus plugs in what reports the focused app, by which dictation
// chooses its mode.
func (d *Dictation) setFocus(f platform.Focus) {
	d.mu.Lock()
	d.focus = f
	d.mu.Unlock()
}

// focusedApp is the focused app's identifier, "" when unknown.
func (d *Dictation) focusedApp() string {
	d.mu.Lock()
	f := d.focus
	d.mu.Unlock()
	if f == nil {
		return ""
	}
	app, err := f.FocusedApp()
	if err != nil {
		return ""
	}
	return app
}

// finishText cleans up, rewrites and inserts a dictation's text (heard as
// words, timed when voice commands are on) as its plan says, returning the
// text inserted. A failed clean-up must not lose the dictation: the raw
// text goes on.
func (d *Dictation) finishText(p *wordPlan, text string, words []whisper.Word, out platform.Output, restore bool) (string, error) {
	if p.cleanup != "" && text != "" {
		// Bounded: on timeout or failure the raw text goes on (cleanup.go).
		text, _ = d.cleanBounded(d.deps.life.ctx, d.cleaner(), text, cleanupInstruction(p), p.cleanupLimit)
	}
	text = p.rw.ApplyHeard(text, words)
	if out == nil || text == "" {
		return text, nil
	}
	if err := out.Insert(text, p.output, restore); err != nil {
		return text, err
	}
	if p.autoEnter && p.output != platform.ModeCopy {
		r, ok := out.(platform.Returner)
		if !ok {
			return text, fmt.Errorf("auto-Enter: %w", platform.ErrUnsupported)
		}
		return text, r.PressReturn()
	}
	return text, nil
}

// wordsOf is the timed words of segs, in order (none without word times).
func wordsOf(segs []whisper.Segment) []whisper.Word {
	var out []whisper.Word
	for _, s := range segs {
		out = append(out, s.Words...)
	}
	return out
}

// maxPreview bounds the text PreviewText rewrites (it comes from the UI).
const maxPreview = 8000

// PreviewText shows what dictation would insert for text under the draft
// settings d (unsaved): "sounds like" spellings, replacements and voice
// commands, without clean-up. Settings' live preview.
func (s *Settings) PreviewText(d SettingsData, text string) (string, error) {
	if len(text) > maxPreview {
		return "", fmt.Errorf("preview: at most %d bytes", maxPreview)
	}
	if err := d.validateWords(); err != nil {
		return "", err
	}
	terms, _ := vocab.Parse(d.Vocabulary)
	rw, err := rewrite.New(rewrite.Options{Vocabulary: terms, Rules: d.Replacements, Commands: d.VoiceCommands})
	if err != nil {
		return "", err
	}
	return rw.Apply(text), nil
}

// PromptFit tells which terms of a vocabulary list (plus a mode's list
// before it, "" for none) go into Whisper's prompt with the speech model
// ("" = the settings') and which do not fit its share of the context.
func (s *Settings) PromptFit(vocabulary, modeVocabulary, model string) (vocab.Prompt, error) {
	global, err := vocab.Parse(vocabulary)
	if err != nil {
		return vocab.Prompt{}, err
	}
	mine, err := vocab.Parse(modeVocabulary)
	if err != nil {
		return vocab.Prompt{}, err
	}
	path, _, err := s.deps.models.resolveSpeech(model)
	if err != nil {
		return vocab.Prompt{}, err
	}
	f, err := whisper.OpenFile(path)
	if err != nil {
		return vocab.Prompt{}, err
	}
	defer f.Close()
	p := vocab.BuildPrompt(f.Vocab, vocab.Merge(mine, global), vocab.PromptTokens)
	if p.Used == nil {
		p.Used = []string{}
	}
	if p.Dropped == nil {
		p.Dropped = []string{}
	}
	return p, nil
}
