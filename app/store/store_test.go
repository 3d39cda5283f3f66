package store

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func open(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func TestMigrateAndReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hark.db")
	s := open(t, path)
	v, err := s.Version()
	require.NoError(t, err)
	require.Equal(t, len(migrations), v)
	require.NoError(t, s.SetSetting("app", `{"theme":"dark"}`))
	it, err := s.InsertItem(Item{Kind: "file", Status: "done", Text: "hello world"})
	require.NoError(t, err)
	require.NoError(t, s.Close())

	s = open(t, path)
	v, err = s.Version()
	require.NoError(t, err)
	require.Equal(t, len(migrations), v, "reopening runs nothing twice")
	val, ok, err := s.Setting("app")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, `{"theme":"dark"}`, val)
	got, err := s.Item(it.ID)
	require.NoError(t, err)
	require.Equal(t, "hello world", got.Text)
	require.Equal(t, "[]", got.Segments)

	_, ok, err = s.Setting("missing")
	require.NoError(t, err)
	require.False(t, ok)

	// A database from a newer app is refused, not damaged.
	_, err = s.db.Exec(`PRAGMA user_version = 99`)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	_, err = Open(path)
	require.ErrorContains(t, err, "newer than this app")

	_, err = Open(filepath.Join(t.TempDir(), "no", "such", "dir", "x.db"))
	require.Error(t, err)
}

func TestItemsSearchAndStatus(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "hark.db"))
	add := func(title, text, status string, at int64) int64 {
		it, err := s.InsertItem(Item{Kind: "dictation", Title: title, Text: text, Status: status, CreatedAt: at})
		require.NoError(t, err)
		return it.ID
	}
	a := add("Meeting", "Ask not what your country can do for you", "done", 1000)
	b := add("Shopping", "Milk, eggs and 100% orange juice", "done", 2000)
	c := add("Dictation", "", "recorded", 3000)

	ids := func(items []Item) []int64 {
		var out []int64
		for _, it := range items {
			out = append(out, it.ID)
		}
		return out
	}
	all, err := s.Items("", 0, 0)
	require.NoError(t, err)
	require.Equal(t, []int64{c, b, a}, ids(all), "newest first")
	got, err := s.Items("COUNTRY ask", 10, 0)
	require.NoError(t, err)
	require.Equal(t, []int64{a}, ids(got), "all words, any case")
	got, err = s.Items("shopping", 10, 0)
	require.NoError(t, err)
	require.Equal(t, []int64{b}, ids(got), "titles match")
	got, err = s.Items("100%", 10, 0)
	require.NoError(t, err)
	require.Equal(t, []int64{b}, ids(got))
	got, err = s.Items("0%_", 10, 0)
	require.NoError(t, err)
	require.Empty(t, got, "% and _ are literal")
	got, err = s.Items("", 1, 1)
	require.NoError(t, err)
	require.Equal(t, []int64{b}, ids(got), "limit and offset page")

	got, err = s.ItemsWithStatus("recorded", "failed")
	require.NoError(t, err)
	require.Equal(t, []int64{c}, ids(got))
	got, err = s.ItemsBefore(2500)
	require.NoError(t, err)
	require.Equal(t, []int64{a, b}, ids(got))

	require.NoError(t, s.SetItemStatus(c, "failed", "boom"))
	it, err := s.Item(c)
	require.NoError(t, err)
	require.Equal(t, "failed", it.Status)
	require.Equal(t, "boom", it.Error)
	it.Text = "now transcribed"
	it.Segments = `[{"startMs":0}]`
	require.NoError(t, s.UpdateItem(it))
	it, err = s.Item(c)
	require.NoError(t, err)
	require.Equal(t, "now transcribed", it.Text)
	require.Equal(t, `[{"startMs":0}]`, it.Segments)

	require.NoError(t, s.DeleteItem(a))
	_, err = s.Item(a)
	require.ErrorIs(t, err, ErrNotFound)
	require.ErrorIs(t, s.DeleteItem(a), ErrNotFound)
	require.ErrorIs(t, s.UpdateItem(Item{ID: 999}), ErrNotFound)
	require.ErrorIs(t, s.SetItemStatus(999, "done", ""), ErrNotFound)
}

func TestConversations(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "hark.db"))
	c1, err := s.InsertConversation("", "stories")
	require.NoError(t, err)
	c2, err := s.InsertConversation("second", "")
	require.NoError(t, err)
	m1, err := s.InsertMessage(Message{ConversationID: c1.ID, Role: "user", Content: "hi"})
	require.NoError(t, err)
	m2, err := s.InsertMessage(Message{ConversationID: c1.ID, Role: "assistant"})
	require.NoError(t, err)
	require.NoError(t, s.UpdateMessage(m2.ID, "hello there", true))
	_, err = s.InsertMessage(Message{ConversationID: 999, Role: "user", Content: "x"})
	require.Error(t, err, "messages belong to a conversation")

	msgs, err := s.Messages(c1.ID)
	require.NoError(t, err)
	require.Len(t, msgs, 2)
	require.Equal(t, m1.ID, msgs[0].ID)
	require.Equal(t, "hello there", msgs[1].Content)
	require.True(t, msgs[1].Stopped)

	require.NoError(t, s.UpdateConversation(c2.ID, "renamed", "m"))
	convs, err := s.Conversations()
	require.NoError(t, err)
	require.Len(t, convs, 2)
	require.Equal(t, c2.ID, convs[0].ID, "most recently updated first")
	require.Equal(t, "renamed", convs[0].Title)

	require.NoError(t, s.DeleteConversation(c1.ID))
	msgs, err = s.Messages(c1.ID)
	require.NoError(t, err)
	require.Empty(t, msgs, "messages go with their conversation")
	_, err = s.Conversation(c1.ID)
	require.ErrorIs(t, err, ErrNotFound)
	require.ErrorIs(t, s.DeleteConversation(c1.ID), ErrNotFound)
	require.ErrorIs(t, s.UpdateMessage(m1.ID, "x", false), ErrNotFound)
}
