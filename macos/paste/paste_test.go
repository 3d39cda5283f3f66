package paste

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

// fakeBoard behaves like NSPasteboard: each write bumps the change count.
type fakeBoard struct {
	mu        sync.Mutex
	items     [][]Entry
	count     int
	transient bool
	restores  int
}

func (f *fakeBoard) ChangeCount() int { f.mu.Lock(); defer f.mu.Unlock(); return f.count }

func (f *fakeBoard) Snapshot() (Snapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var s Snapshot
	for i, it := range f.items {
		for _, e := range it {
			s.Add(i, e)
		}
	}
	return s, nil
}

func (f *fakeBoard) Restore(s Snapshot) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.items = s.Items
	f.count++
	f.restores++
	return nil
}

func (f *fakeBoard) SetText(t string, transient bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.items = [][]Entry{{{Type: "public.utf8-plain-text", Data: []byte(t)}}}
	f.transient = transient
	f.count++
	return nil
}

// userCopy simulates the user copying something else.
func (f *fakeBoard) userCopy(t string) { _ = f.SetText(t, false) }

func (f *fakeBoard) restored() int { f.mu.Lock(); defer f.mu.Unlock(); return f.restores }

func (f *fakeBoard) all() [][]Entry { f.mu.Lock(); defer f.mu.Unlock(); return f.items }

func (f *fakeBoard) text() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.items) == 0 || len(f.items[0]) == 0 {
		return ""
	}
	return string(f.items[0][0].Data)
}

func newPaster(b board, keys func() error) *paster {
	return &paster{b: b, delay: 30 * time.Millisecond, keys: keys}
}

func TestPasteRestoresPreviousContent(t *testing.T) {
	b := &fakeBoard{}
	b.items = [][]Entry{{{Type: "public.png", Data: []byte{1, 2, 3}}, {Type: "public.utf8-plain-text", Data: []byte("old")}}}
	var sent int
	p := newPaster(b, func() error {
		require.Equal(t, "dictated", b.text(), "the keystroke goes out after the text is on the board")
		sent++
		return nil
	})
	require.NoError(t, p.insert("dictated", true, true))
	require.Equal(t, 1, sent)
	require.Equal(t, "dictated", b.text())
	b.mu.Lock()
	require.True(t, b.transient, "text that will be replaced is marked transient")
	b.mu.Unlock()
	require.Eventually(t, func() bool { return b.ChangeCount() == 2 }, shared.Wait(t, time.Second), 5*time.Millisecond)
	require.Equal(t, [][]Entry{{{Type: "public.png", Data: []byte{1, 2, 3}}, {Type: "public.utf8-plain-text", Data: []byte("old")}}}, b.all(),
		"every representation of every item comes back")
}

func TestPasteDoesNotClobberUserCopy(t *testing.T) {
	b := &fakeBoard{}
	b.userCopy("old")
	p := newPaster(b, func() error { return nil })
	require.NoError(t, p.insert("dictated", true, true))
	b.userCopy("user copied this meanwhile")
	time.Sleep(100 * time.Millisecond)
	require.Equal(t, "user copied this meanwhile", b.text())
	require.Zero(t, b.restored())
}

func TestBackToBackPastesRestoreTheOriginal(t *testing.T) {
	b := &fakeBoard{}
	b.userCopy("original")
	p := newPaster(b, func() error { return nil })
	require.NoError(t, p.insert("first", true, true))
	require.NoError(t, p.insert("second", true, true))
	require.Eventually(t, func() bool { return b.restored() == 1 }, shared.Wait(t, time.Second), 5*time.Millisecond)
	time.Sleep(60 * time.Millisecond)
	require.Equal(t, 1, b.restored(), "the superseded restore never fires")
	require.Equal(t, "original", b.text(), "not the first dictation")
}

func TestCopyOnlyKeepsText(t *testing.T) {
	b := &fakeBoard{}
	b.userCopy("old")
	p := newPaster(b, func() error { t.Fatal("copy mode must not send keys"); return nil })
	require.NoError(t, p.insert("dictated", false, false))
	b.mu.Lock()
	require.False(t, b.transient, "copied text belongs in clipboard history")
	b.mu.Unlock()
	time.Sleep(60 * time.Millisecond)
	require.Equal(t, "dictated", b.text())
	require.Zero(t, b.restored())
}

func TestFailedKeystrokeLeavesTextForManualPaste(t *testing.T) {
	b := &fakeBoard{}
	b.userCopy("old")
	p := newPaster(b, func() error { return ErrNotTrusted })
	err := p.insert("dictated", true, true)
	require.ErrorIs(t, err, ErrNotTrusted)
	time.Sleep(60 * time.Millisecond)
	require.Equal(t, "dictated", b.text())
	require.Zero(t, b.restored())
}

func TestFlushRestoresNow(t *testing.T) {
	b := &fakeBoard{}
	b.userCopy("old")
	p := &paster{b: b, delay: time.Hour, keys: func() error { return nil }}
	require.NoError(t, p.insert("dictated", true, true))
	require.NoError(t, p.flush())
	require.Equal(t, "old", b.text())
	require.NoError(t, p.flush(), "nothing pending")
	require.Equal(t, 1, b.restored())
}

func TestSetTextErrorPropagates(t *testing.T) {
	b := &errBoard{fakeBoard: &fakeBoard{}}
	p := newPaster(b, func() error { t.Fatal("no keys after a failed write"); return nil })
	require.ErrorContains(t, p.insert("x", true, true), "pasteboard refused")
}

type errBoard struct{ *fakeBoard }

func (e *errBoard) SetText(string, bool) error { return errors.New("pasteboard refused") }

func TestSnapshotBudget(t *testing.T) {
	var s Snapshot
	s.Add(0, Entry{Type: "a", Data: make([]byte, MaxSnapshotBytes-10)})
	s.Add(1, Entry{Type: "b", Data: make([]byte, 11)})
	s.Add(1, Entry{Type: "c", Data: make([]byte, 10)})
	require.True(t, s.Truncated)
	require.Len(t, s.Items, 2)
	require.Len(t, s.Items[0], 1)
	require.Equal(t, "c", s.Items[1][0].Type)
	require.Equal(t, MaxSnapshotBytes, s.size)
}

func TestChunkUTF16(t *testing.T) {
	require.Empty(t, chunkUTF16("", 20))
	text := strings.Repeat("ab", 25) // 50 units
	chunks := chunkUTF16(text, 20)
	require.Len(t, chunks, 3)
	require.Len(t, chunks[0], 20)
	require.Len(t, chunks[2], 10)

	// 19 ASCII then an emoji (a surrogate pair): the pair moves whole to
	// the next chunk.
	s := strings.Repeat("x", 19) + "😀" + "é"
	chunks = chunkUTF16(s, 20)
	require.Len(t, chunks[0], 19)
	var joined []uint16
	for _, c := range chunks {
		require.LessOrEqual(t, len(c), 20)
		require.False(t, c[len(c)-1] >= 0xD800 && c[len(c)-1] < 0xDC00, "chunk ends on a high surrogate")
		joined = append(joined, c...)
	}
	require.Equal(t, s, string(utf16.Decode(joined)))

	// Only emoji, odd limit: never splits a pair, never loops forever.
	e := strings.Repeat("😀", 7)
	var all []uint16
	for _, c := range chunkUTF16(e, 3) {
		require.Len(t, c, 2)
		all = append(all, c...)
	}
	require.Equal(t, e, string(utf16.Decode(all)))
}
