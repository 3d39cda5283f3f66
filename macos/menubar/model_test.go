package menubar

import (
	"bytes"
	"image"
	"image/png"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestBuildIdleAndRecording(t *testing.T) {
	idle := Build(State{})
	require.Equal(t, "Start Dictation", idle[0].Title)
	require.Equal(t, ActionToggle, idle[0].Action)
	require.True(t, idle[1].Separator)
	require.Equal(t, "Recent Transcripts", idle[2].Title)
	require.Equal(t, []Item{{Title: "No transcripts yet"}}, idle[2].Submenu, "empty list shows one disabled entry")
	require.Equal(t, ActionOpen, idle[3].Action)
	require.True(t, idle[4].Separator)
	require.Equal(t, Item{Title: "Quit Hark", Action: ActionQuit, Enabled: true, Key: "q"}, idle[5])

	rec := Build(State{Recording: true})
	require.Equal(t, "Stop Dictation", rec[0].Title)
	require.Equal(t, ActionToggle, rec[0].Action)
}

func TestBuildRecentTagsAndCap(t *testing.T) {
	var recent []string
	for i := 0; i < 15; i++ {
		recent = append(recent, strings.Repeat("x", i+1))
	}
	m := Build(State{Recent: recent})
	sub := m[2].Submenu
	require.Len(t, sub, MaxRecent)
	for i, it := range sub {
		require.Equal(t, ActionRecent, it.Action)
		require.Equal(t, i, it.Tag, "tag is the index the OnRecent callback receives")
		require.True(t, it.Enabled)
		require.Equal(t, recent[i], it.Title)
	}
}

func TestRecentTitle(t *testing.T) {
	require.Equal(t, "hello world", RecentTitle("  hello\n\n\tworld  "))
	require.Equal(t, "(empty)", RecentTitle(" \n\t "))
	require.Equal(t, "(empty)", RecentTitle(""))
	require.Equal(t, "ab", RecentTitle("a\x00\x07b"))
	require.Equal(t, "a b", RecentTitle("a\x00 \x07b"))

	long := "The quick brown fox jumps over the lazy dog and keeps running far away"
	got := RecentTitle(long)
	require.LessOrEqual(t, utf8.RuneCountInString(got), maxTitle)
	require.True(t, strings.HasSuffix(got, "…"))
	require.Equal(t, "The quick brown fox jumps over the lazy dog and…", got, "cut at a word boundary")

	// No space near the end: hard cut, still within the limit, valid UTF-8.
	cjk := strings.Repeat("語", 100)
	got = RecentTitle(cjk)
	require.True(t, utf8.ValidString(got))
	require.Equal(t, maxTitle, utf8.RuneCountInString(got))

	exact := strings.Repeat("y", maxTitle)
	require.Equal(t, exact, RecentTitle(exact))
}

func decode(t *testing.T, b []byte) *image.NRGBA {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	require.NoError(t, err)
	n, ok := img.(*image.NRGBA)
	require.True(t, ok, "icon must be RGBA with alpha, got %T", img)
	return n
}

func TestIconsAreTemplateImages(t *testing.T) {
	ink := map[bool]int{}
	for _, rec := range []bool{false, true} {
		img := decode(t, Icon(State{Recording: rec}))
		require.Equal(t, image.Rect(0, 0, 36, 36), img.Bounds(), "@2x of an 18pt status glyph")
		for i := 0; i < len(img.Pix); i += 4 {
			// A template image is black plus alpha; macOS tints it.
			require.Zero(t, img.Pix[i]|img.Pix[i+1]|img.Pix[i+2], "non-black pixel at %d", i/4)
			ink[rec] += int(img.Pix[i+3])
		}
		// Leave a transparent border row so the glyph does not touch the
		// menu bar's edges.
		for x := 0; x < 36; x++ {
			require.Zero(t, img.NRGBAAt(x, 0).A)
			require.Zero(t, img.NRGBAAt(x, 35).A)
		}
	}
	require.Greater(t, ink[false], 36*36*255/20, "idle icon has visible ink")
	require.Greater(t, ink[true], ink[false]*5/4, "recording icon is visibly heavier")
	require.NotEqual(t, Icon(State{}), Icon(State{Recording: true}))
	require.Equal(t, "Hark — recording", Tooltip(State{Recording: true}))
	require.Equal(t, "Hark", Tooltip(State{}))

	// Transcribing: its own template icon, tooltip and a disabled first
	// item (nothing to start or stop until the text is in).
	tr := decode(t, Icon(State{Transcribing: true}))
	require.Equal(t, image.Rect(0, 0, 36, 36), tr.Bounds())
	for i := 0; i < len(tr.Pix); i += 4 {
		require.Zero(t, tr.Pix[i]|tr.Pix[i+1]|tr.Pix[i+2], "non-black pixel at %d", i/4)
	}
	require.NotEqual(t, Icon(State{}), Icon(State{Transcribing: true}))
	require.NotEqual(t, Icon(State{Recording: true}), Icon(State{Transcribing: true}))
	require.Equal(t, "Hark — transcribing", Tooltip(State{Transcribing: true}))
	require.Equal(t, Item{Title: "Transcribing…"}, Build(State{Transcribing: true})[0])
}

// With modes, a Mode submenu lists automatic and each mode, the one in
// force checked; its tags map back to names through ModeAt.
func TestBuildModes(t *testing.T) {
	s := State{Modes: []string{"Chat", "Email"}, ActiveMode: "email"}
	m := Build(s)
	require.Equal(t, "Mode", m[2].Title)
	require.Equal(t, "Recent Transcripts", m[3].Title)
	require.Equal(t, ActionQuit, m[len(m)-1].Action)
	sub := m[2].Submenu
	require.Equal(t, []Item{
		{Title: "Automatic (by app)", Action: ActionMode, Tag: 0, Enabled: true},
		{Separator: true},
		{Title: "Chat", Action: ActionMode, Tag: 1, Enabled: true},
		{Title: "Email", Action: ActionMode, Tag: 2, Enabled: true, Checked: true},
	}, sub)
	for _, it := range sub {
		if it.Separator {
			continue
		}
		name, ok := s.ModeAt(it.Tag)
		require.True(t, ok)
		if it.Tag == 0 {
			require.Equal(t, "", name)
		} else {
			require.Equal(t, it.Title, name)
		}
	}
	_, ok := s.ModeAt(3)
	require.False(t, ok, "a tag from a menu built before a mode was deleted")
	_, ok = s.ModeAt(-1)
	require.False(t, ok)

	// Automatic is checked when no mode, or a deleted one, is chosen by hand.
	for _, active := range []string{"", "Gone"} {
		sub := Build(State{Modes: []string{"Chat"}, ActiveMode: active})[2].Submenu
		require.True(t, sub[0].Checked, "active %q", active)
		require.False(t, sub[2].Checked)
	}
	require.Len(t, Build(State{}), 6, "no modes: no Mode submenu")
}
