package app

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/app/modes"
	"github.com/harkapp/hark/engine/runtime"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/engine/whisper/parity"
	"github.com/harkapp/hark/internal/rewrite"
	"github.com/harkapp/hark/internal/shared"
)

// fixedFocus reports one app as focused.
type fixedFocus struct {
	mu  sync.Mutex
	app string
}

func (f *fixedFocus) FocusedApp() (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.app, nil
}
func (f *fixedFocus) set(app string) { f.mu.Lock(); f.app = app; f.mu.Unlock() }

// returnSink is a textSink that also presses Return.
type returnSink struct {
	textSink
	returns int
}

func (s *returnSink) PressReturn() error { s.mu.Lock(); s.returns++; s.mu.Unlock(); return nil }

// The focused app picks the mode; the mode's output, auto-Enter and
// vocabulary apply; replacements and "sounds like" spellings rewrite the
// inserted text; History keeps the mode and the prompt terms.
func TestDictationModesAndVocabulary(t *testing.T) {
	a := openApp(t, t.TempDir(), testModelsDir(t), nil)
	focus := &fixedFocus{app: "Slack"}
	sink := &returnSink{}
	a.SetRecorder(&clipRecorder{clip: shared.Path(t, "audio", "jfk.wav")})
	a.SetOutput(sink)
	a.SetFocus(focus)

	s, err := a.Settings.Get()
	require.NoError(t, err)
	s.Vocabulary = "Comrades = fellow\n"
	// The kit model memorises clips and derails on any glossary prompt
	// (README, Vocabulary): the text is checked with the prompt off.
	s.VocabularyPrompt = false
	s.Replacements = []rewrite.Rule{{From: "country", To: "nation", WholeWord: true}}
	s.Modes = []modes.Mode{{Name: "Chat", Apps: []string{"slack"}, Vocabulary: "Americans\n", Output: "type", AutoEnter: true}}
	_, err = a.Settings.Update(s)
	require.NoError(t, err)

	require.NoError(t, a.Dictation.Start())
	st, _ := a.Dictation.Status()
	require.Equal(t, "Chat", st.Mode)
	it, err := a.Dictation.Stop()
	require.NoError(t, err)
	want := "And so my Comrades Americans, ask not what your nation can do for you, ask what you can do for your nation."
	require.Equal(t, []string{want}, sink.texts)
	require.Equal(t, []string{"type"}, sink.modes)
	require.Equal(t, 1, sink.returns)
	require.Equal(t, "Chat", it.Mode)
	require.Equal(t, []string{}, it.PromptTerms, "the prompt is off")
	require.Equal(t, kitText(t, "jfk"), it.Text, "History keeps the raw transcript")
	require.NotEmpty(t, it.Segments[0].Words, "voice commands are on: the words are timed to tell a command from a sentence")

	// Another app, no default mode: the general settings; the prompt on.
	s.VocabularyPrompt = true
	_, err = a.Settings.Update(s)
	require.NoError(t, err)
	focus.set("firefox")
	require.NoError(t, a.Dictation.Start())
	it, err = a.Dictation.Stop()
	require.NoError(t, err)
	require.Equal(t, "", it.Mode)
	require.Equal(t, []string{"Comrades"}, it.PromptTerms)
	require.Equal(t, 1, sink.returns)
	require.Equal(t, "paste", sink.modes[1])

	got, err := a.History.Get(it.ID)
	require.NoError(t, err)
	require.Equal(t, it.PromptTerms, got.PromptTerms)

	// Chosen by hand, the mode applies whatever has the focus; its terms
	// come first in the prompt.
	s.ActiveMode = "chat"
	p, err := planFor(s, "firefox", true)
	require.NoError(t, err)
	require.Equal(t, "Chat", p.mode)
	kit, err := whisper.OpenFile(shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-q8_0.bin"))
	require.NoError(t, err)
	defer kit.Close()
	opt := whisper.DefaultTranscribeOptions()
	require.Equal(t, []string{"Americans", "Comrades"}, p.steer(&opt, kit))

	// File transcription uses the general vocabulary, no mode.
	file := record(t, a, "jfk")
	file, err = a.Transcription.transcribeWith(t.Context(), file.ID, "", nil, speechBeams, runtime.Batch, nil, nil) // as a file job does
	require.NoError(t, err)
	require.Equal(t, "", file.Mode)
	require.Equal(t, []string{"Comrades"}, file.PromptTerms)
}

func TestWordSettingsValidation(t *testing.T) {
	a := openApp(t, t.TempDir(), t.TempDir(), nil)
	good, err := a.Settings.Get()
	require.NoError(t, err)
	for name, mod := range map[string]func(*SettingsData){
		"vocabulary":   func(s *SettingsData) { s.Vocabulary = "= nothing" },
		"bias":         func(s *SettingsData) { s.VocabularyBias = 11 },
		"replacement":  func(s *SettingsData) { s.Replacements = []rewrite.Rule{{From: ""}} },
		"mode":         func(s *SettingsData) { s.Modes = []modes.Mode{{Name: "x", Output: "shout"}} },
		"default mode": func(s *SettingsData) { s.DefaultMode = "missing" },
		"active mode":  func(s *SettingsData) { s.ActiveMode = "missing" },
	} {
		s := good
		mod(&s)
		_, err := a.Settings.Update(s)
		require.Error(t, err, name)
	}
	got, err := a.Settings.Get()
	require.NoError(t, err)
	require.Equal(t, good, got, "a rejected update changes nothing")
}

// Translate cannot be checked with the English-only kit model: the plan
// asks a multilingual model (the synthetic one of the Whisper parity
// tests) for translation and the mode's language, and an English-only
// one for English transcription.
func TestModeTranslatePlumbing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "multi.bin")
	require.NoError(t, parity.Write(parity.Configs[0], shared.Path(t, "whisper-kit", "assets"), path))
	multi, err := whisper.OpenFile(path)
	require.NoError(t, err)
	defer multi.Close()
	kit, err := whisper.OpenFile(shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-q8_0.bin"))
	require.NoError(t, err)
	defer kit.Close()

	set := defaultSettings()
	set.Vocabulary = "Hark\n"
	set.Modes = []modes.Mode{{Name: "Deutsch", Apps: []string{"mail"}, Language: "de", Translate: true}}
	p, err := planFor(set, "mail", true)
	require.NoError(t, err)
	opt := whisper.DefaultTranscribeOptions()
	used := p.steer(&opt, multi)
	require.Equal(t, "translate", opt.Task)
	require.Equal(t, "de", opt.Language)
	require.Equal(t, []string{"Hark"}, used)
	require.Equal(t, multi.Vocab.Encode(" Hark."), opt.Vocabulary)

	opt = whisper.DefaultTranscribeOptions()
	p.steer(&opt, kit)
	require.Equal(t, "", opt.Task)
	require.Equal(t, "en", opt.Language)
	require.True(t, strings.HasPrefix(kit.Vocab.Decode(opt.Vocabulary), " Hark"))
}

func TestPreviewAndPromptFit(t *testing.T) {
	a := openApp(t, t.TempDir(), testModelsDir(t), nil)
	d := defaultSettings()
	d.Vocabulary = "Kubernetes = cooper netties\n"
	d.Replacements = []rewrite.Rule{{From: "teh", To: "the", WholeWord: true, IgnoreCase: true}}
	got, err := a.Settings.PreviewText(d, "Teh cooper netties cluster. New line. Done.")
	require.NoError(t, err)
	require.Equal(t, "the Kubernetes cluster.\nDone.", got)
	d.Vocabulary = "= bad"
	_, err = a.Settings.PreviewText(d, "x")
	require.Error(t, err)
	_, err = a.Settings.PreviewText(defaultSettings(), strings.Repeat("x", maxPreview+1))
	require.Error(t, err)

	var list strings.Builder
	for i := range 60 {
		list.WriteString("Term" + strings.Repeat("x", i%3) + string(rune('A'+i%26)) + string(rune('a'+i/26)) + "\n")
	}
	p, err := a.Settings.PromptFit(list.String(), "Hark\n", "")
	require.NoError(t, err)
	require.Equal(t, "Hark", p.Used[0], "the mode's terms first")
	require.NotEmpty(t, p.Dropped, "60 terms do not fit")
	require.Equal(t, 61, len(p.Used)+len(p.Dropped))
	require.LessOrEqual(t, len(p.Tokens), 112)
}

// Dictation's voice commands go by the words as heard: a phrase inside a
// fluent sentence stays words, one set apart by pauses is a command, even
// where Whisper wrote no punctuation around it.
func TestFinishTextVoiceCommandsHeard(t *testing.T) {
	p, err := planFor(defaultSettings(), "", true)
	require.NoError(t, err)
	say := func(text string, pauseBefore ...int) []whisper.Word {
		var out []whisper.Word
		at := 0.0
		for i, w := range strings.Fields(text) {
			at += 0.05
			if slices.Contains(pauseBefore, i) {
				at += 0.6
			}
			out = append(out, whisper.Word{Word: " " + w, Start: at, End: at + 0.3})
			at += 0.3
		}
		return out
	}
	d := &Dictation{}
	for _, c := range []struct {
		text, want string
		pauses     []int
	}{
		{"We launched a new line of shoes.", "We launched a new line of shoes.", nil},
		{"The new paragraph starts here.", "The new paragraph starts here.", nil},
		{"Dear Anna new line thanks for the notes", "Dear Anna\nThanks for the notes", []int{2, 4}},
	} {
		got, err := d.finishText(p, c.text, say(c.text, c.pauses...), nil, false)
		require.NoError(t, err)
		require.Equal(t, c.want, got, c.text)
	}
}
