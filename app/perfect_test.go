package app

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/engine/runtime"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/shared"
)

// fakeField is the focused text field: what dictation inserts is typed at
// its end, and ReplaceEnd swaps its end as macOS Accessibility would.
type fakeField struct {
	mu    sync.Mutex
	value string
	swaps int
}

func (f *fakeField) Insert(text, mode string, restore bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if mode != "copy" {
		f.value += text
	}
	return nil
}

func (f *fakeField) ReplaceEnd(old, better string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if old == "" || !strings.HasSuffix(f.value, old) {
		return false, nil
	}
	f.value = f.value[:len(f.value)-len(old)] + better
	f.swaps++
	return true, nil
}

func (f *fakeField) get() string  { f.mu.Lock(); defer f.mu.Unlock(); return f.value }
func (f *fakeField) set(v string) { f.mu.Lock(); f.value = v; f.mu.Unlock() }

// fastRecorder is a clipRecorder whose live stream heard only the first
// part of the clip when the user let go (its fast text is the kit q8_0
// model's transcript of that part): the background pass over the whole
// recording then has something better to offer.
type fastRecorder struct {
	clipRecorder
	fast *whisper.Result
}

func (r *fastRecorder) Streamed() *whisper.Result { return r.fast }

// "Type now, perfect later" with the kit's q8_0 model as the fast one and
// its f16 model as the "larger" one (the only pair here; both are the
// same tiny network, so on a whole clip they agree and the fast text is
// made worse by cutting the stream short).
func TestPerfectLater(t *testing.T) {
	ev := newEvents()
	models := testModelsDir(t)
	f16 := shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-f16.bin")
	if os.Link(f16, filepath.Join(models, "kit-f16.bin")) != nil {
		b, err := os.ReadFile(f16)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(models, "kit-f16.bin"), b, 0o644))
	}
	a := openApp(t, t.TempDir(), models, ev)
	field := &fakeField{value: "Dear Bob, "}
	a.SetOutput(field)
	a.SetTextField(field)
	focus := &fixedFocus{app: "com.apple.mail"}
	a.SetFocus(focus)

	s, err := a.Settings.Get()
	require.NoError(t, err)
	s.SpeechModel, s.PerfectLater, s.PerfectModel = "kit", true, "kit-f16"
	s.VocabularyPrompt = false // the kit derails on a glossary (README, Vocabulary)
	_, err = a.Settings.Update(s)
	require.NoError(t, err)

	clip := shared.Path(t, "audio", "jfk.wav")
	x, err := audio.Load16k(clip)
	require.NoError(t, err)
	// The fast text: the settings' model on the clip's first part.
	kit, _, err := a.Models.resolveSpeech("")
	require.NoError(t, err)
	var part *whisper.Result
	require.NoError(t, a.Models.withSpeech(t.Context(), kit, runtime.Dictation, func(m *runtime.SpeechModel) error {
		opt := whisper.DefaultTranscribeOptions()
		opt.Language, opt.BeamSize = "en", dictationBeams
		part, err = m.File.TranscribeSamples(t.Context(), m.Model, x[:len(x)*2/5], opt)
		return err
	}))
	part.Text = strings.TrimSpace(part.Text)
	full := kitText(t, "jfk")
	require.NotEqual(t, full, part.Text)
	a.SetRecorder(&fastRecorder{clipRecorder: clipRecorder{clip: clip}, fast: &whisper.Result{Text: part.Text}})

	dictate := func() BetterText {
		t.Helper()
		require.NoError(t, a.Dictation.Start())
		it, err := a.Dictation.Stop()
		require.NoError(t, err)
		require.Equal(t, part.Text, it.Text, "the fast text went in at once")
		bt := ev.wait(t, "dictation:better", func(d any) bool { return d.(BetterText).ItemID == it.ID }, 5*time.Minute).(BetterText)
		got, err := a.History.Get(it.ID)
		require.NoError(t, err)
		require.Equal(t, full, got.Text, "History keeps the better transcript")
		require.Equal(t, "kit-f16", got.Model)
		return bt
	}

	// The field still ends with what Hark typed: replaced in place.
	bt := dictate()
	require.True(t, bt.Replaced)
	require.Equal(t, full, bt.Text)
	require.Equal(t, part.Text, bt.Inserted)
	require.Equal(t, "kit-f16", bt.Model)
	require.Equal(t, "Dear Bob, "+full, field.get())
	offer, err := a.Dictation.Better()
	require.NoError(t, err)
	require.Nil(t, offer, "nothing to offer after a swap")

	// The user typed on before the better text came: offered, not swapped;
	// the keystroke's action copies it.
	field.set("")
	a.SetOutput(&typingField{fakeField: field, after: " and more"})
	bt = dictate()
	require.False(t, bt.Replaced)
	require.Equal(t, part.Text+" and more", field.get(), "the field is left alone")
	require.Equal(t, s.BetterHotkey, bt.Hotkey)
	offer, err = a.Dictation.Better()
	require.NoError(t, err)
	require.Equal(t, full, offer.Text)
	copied := &textSink{}
	a.SetOutput(copied)
	_, err = a.Dictation.CopyBetter()
	require.NoError(t, err)
	require.Equal(t, []string{full}, copied.texts)
	require.Equal(t, []string{"copy"}, copied.modes)
	_, err = a.Dictation.CopyBetter()
	require.ErrorIs(t, err, errNoOffer, "the offer is withdrawn once copied")

}

// Where the better text goes when it is not safe to swap: another app has
// the focus, there is no way to edit fields (X11), or the text was only
// copied. (The decision after the second pass, without the models.)
func TestPerfectLaterOffers(t *testing.T) {
	a := openApp(t, t.TempDir(), testModelsDir(t), nil)
	field := &fakeField{value: "Dear Bob, ask not"}
	a.SetTextField(field)
	d := a.Dictation
	offer := func(q wordPlan) *BetterText {
		t.Helper()
		bt, err := d.deliver(&BetterText{ItemID: 1, Text: "ask not what", Inserted: "ask not", Model: "big"}, &q)
		require.NoError(t, err)
		return bt
	}

	a.SetFocus(&fixedFocus{app: "com.apple.mail"})
	bt := offer(wordPlan{app: "org.mozilla.firefox", output: "paste"})
	require.False(t, bt.Replaced, "another app has the focus now")
	bt = offer(wordPlan{app: "com.apple.mail", output: "copy"})
	require.False(t, bt.Replaced, "a copy went into no field")
	require.Equal(t, "Dear Bob, ask not", field.get())
	require.Equal(t, defaultBetterHotkey(), bt.Hotkey)

	a.SetTextField(nil)
	bt = offer(wordPlan{app: "com.apple.mail", output: "paste"})
	require.False(t, bt.Replaced, "no way to edit the field (X11)")
	got, err := d.Better()
	require.NoError(t, err)
	require.Equal(t, "ask not what", got.Text)

	// The next dictation's pass withdraws the offer before it starts.
	d.withdraw()
	got, err = d.Better()
	require.NoError(t, err)
	require.Nil(t, got)
	_, err = d.CopyBetter()
	require.ErrorIs(t, err, errNoOffer)

	a.SetTextField(field)
	bt = offer(wordPlan{app: "com.apple.mail", output: "paste"})
	require.True(t, bt.Replaced)
	require.Equal(t, "Dear Bob, ask not what", field.get())

	s, err := a.Settings.Get()
	require.NoError(t, err)
	s.BetterHotkey = s.Hotkey
	_, err = a.Settings.Update(s)
	require.ErrorContains(t, err, "betterHotkey")
	s.BetterHotkey, s.PerfectModel = "", "../etc/passwd"
	_, err = a.Settings.Update(s)
	require.ErrorContains(t, err, "perfectModel")
}

// typingField is a field into which the user types after each insertion.
type typingField struct {
	*fakeField
	after string
}

func (f *typingField) Insert(text, mode string, restore bool) error {
	if err := f.fakeField.Insert(text, mode, restore); err != nil {
		return err
	}
	return f.fakeField.Insert(f.after, mode, restore)
}
