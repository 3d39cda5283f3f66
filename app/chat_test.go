package app

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/runtime"
	"github.com/harkapp/hark/internal/shared"
)

func TestChatStreamsStoresAndStops(t *testing.T) {
	ev := newEvents()
	a := openApp(t, t.TempDir(), testModelsDir(t), ev)

	cv, err := a.Chat.Create("stories")
	require.NoError(t, err)
	msg, err := a.Chat.Send(cv.ID, "Once upon a time there was a little girl")
	require.NoError(t, err)
	require.Equal(t, "assistant", msg.Role)
	require.Empty(t, msg.Content, "Send returns at once; the answer streams")
	done := ev.wait(t, "chat:done", func(d any) bool { return d.(ChatDone).MessageID == msg.ID }, 60*time.Second).(ChatDone)
	require.Empty(t, done.Error)
	require.False(t, done.Stopped)

	var streamed strings.Builder
	tokens := 0
	for _, d := range ev.named("chat:token") {
		tk := d.(ChatToken)
		if tk.MessageID == msg.ID {
			require.Equal(t, cv.ID, tk.ConversationID)
			streamed.WriteString(tk.Text)
			tokens++
		}
	}
	require.Greater(t, tokens, 3, "the answer streams token by token")
	require.NotEmpty(t, strings.TrimSpace(streamed.String()))
	require.Equal(t, streamed.String(), done.Content)

	msgs, err := a.Chat.Messages(cv.ID)
	require.NoError(t, err)
	require.Len(t, msgs, 2)
	require.Equal(t, "user", msgs[0].Role)
	require.Equal(t, "Once upon a time there was a little girl", msgs[0].Content)
	require.Equal(t, streamed.String(), msgs[1].Content, "the answer is stored")
	convs, err := a.Chat.Conversations()
	require.NoError(t, err)
	require.Len(t, convs, 1)
	require.Equal(t, "Once upon a time there was a little girl", convs[0].Title, "titled after the first message")

	// Stop from inside the first token's event: generation checks between
	// tokens, so the answer ends right there.
	var stopAt atomic.Int64
	ev.hook = func(name string, d any) {
		if tk, ok := d.(ChatToken); ok && name == "chat:token" && tk.MessageID == stopAt.Load() {
			a.Chat.Stop(tk.ConversationID)
		}
	}
	// Hold the model so the message id is known before generation starts.
	stories, _, err := a.Models.resolveChat("stories")
	require.NoError(t, err)
	held, err := a.rt.LLM(context.Background(), stories, runtime.Interactive)
	require.NoError(t, err)
	msg2, err := a.Chat.Send(cv.ID, "Tell me a very long story about a dog")
	stopAt.Store(msg2.ID)
	held.Release()
	require.NoError(t, err)
	_, err = a.Chat.Send(cv.ID, "again")
	require.Error(t, err, "one answer per conversation at a time")
	done2 := ev.wait(t, "chat:done", func(d any) bool { return d.(ChatDone).MessageID == msg2.ID }, 60*time.Second).(ChatDone)
	require.True(t, done2.Stopped)
	require.Empty(t, done2.Error)
	require.LessOrEqual(t, tokenEvents(ev, msg2.ID), 2, "Stop takes effect within a token")
	msgs, err = a.Chat.Messages(cv.ID)
	require.NoError(t, err)
	require.Len(t, msgs, 4)
	require.True(t, msgs[3].Stopped)
	require.Equal(t, done2.Content, msgs[3].Content)

	require.Equal(t, 1, a.rt.Loads(stories), "the chat model is loaded once and kept")

	require.NoError(t, a.Chat.Rename(cv.ID, "Stories"))
	got, err := a.Chat.Get(cv.ID)
	require.NoError(t, err)
	require.Equal(t, "Stories", got.Title)
	require.Equal(t, "stories", got.Model)
	require.NoError(t, a.Chat.Delete(cv.ID))
	_, err = a.Chat.Messages(cv.ID)
	require.Error(t, err)
	_, err = a.Chat.Send(cv.ID, "hello")
	require.Error(t, err)
	_, err = a.Chat.Create("no-such-model")
	require.Error(t, err)
}

func TestChatCleanupAndFromTranscript(t *testing.T) {
	ev := newEvents()
	a := openApp(t, t.TempDir(), testModelsDir(t), ev)

	out, err := a.Chat.Cleanup("so um the cat sat on the mat", "Fix the text.")
	require.NoError(t, err)
	require.NotEmpty(t, strings.TrimSpace(out))
	// Greedy decoding: the same input cleans up the same way.
	again, err := a.Chat.Cleanup("so um the cat sat on the mat", "Fix the text.")
	require.NoError(t, err)
	require.Equal(t, out, again)
	blank, err := a.Chat.Cleanup("  ", "")
	require.NoError(t, err)
	require.Equal(t, "  ", blank)

	// A finished history item seeds a conversation.
	r, err := a.db.InsertItem(Item{Kind: KindFile, Title: "memo.wav", Status: StatusDone, Text: "Buy milk and call Anna."}.row())
	require.NoError(t, err)
	cv, err := a.Chat.FromTranscript(r.ID, "Summarise this")
	require.NoError(t, err)
	require.Contains(t, cv.Title, "memo.wav")
	a.Chat.Wait(cv.ID)
	msgs, err := a.Chat.Messages(cv.ID)
	require.NoError(t, err)
	require.Len(t, msgs, 3)
	require.Equal(t, "system", msgs[0].Role)
	require.Contains(t, msgs[0].Content, "Buy milk and call Anna.")
	require.Equal(t, "Summarise this", msgs[1].Content)
	require.Equal(t, "assistant", msgs[2].Role)
	require.NotEmpty(t, msgs[2].Content)

	pending, err := a.db.InsertItem(Item{Kind: KindFile, Title: "x.wav", Status: StatusRecorded}.row())
	require.NoError(t, err)
	_, err = a.Chat.FromTranscript(pending.ID, "")
	require.Error(t, err, "no transcript yet")
}

func TestIdleUnload(t *testing.T) {
	a, err := New(Config{DataDir: t.TempDir(), ModelsDir: testModelsDir(t), IdleCheck: 20 * time.Millisecond, NoSpeedProbe: true})
	require.NoError(t, err)
	defer a.Close()
	_, err = a.Chat.Cleanup("hello there", "Fix.")
	require.NoError(t, err)
	require.Len(t, a.rt.Loaded(), 1, "kept loaded after use")
	time.Sleep(100 * time.Millisecond)
	require.Len(t, a.rt.Loaded(), 1, "the default idle time is minutes")

	// The idle time is in minutes; the test shortens the clock instead.
	a.idleForTest.Store(int64(10 * time.Millisecond))
	require.Eventually(t, func() bool { return len(a.rt.Loaded()) == 0 }, shared.Wait(t, 5*time.Second), 20*time.Millisecond)
	_, err = a.Chat.Cleanup("hello there", "Fix.")
	require.NoError(t, err)
	stories, _, err := a.Models.resolveChat("")
	require.NoError(t, err)
	require.Equal(t, 2, a.rt.Loads(stories), "reloaded on the next use")
}

// Config.ChatMaxTokens bounds every answer: a story model that would
// write hundreds of tokens (TestChatStreamsStoresAndStops) stops at the
// bound, an answer kept whole rather than "stopped".
func TestChatMaxTokens(t *testing.T) {
	ev := newEvents()
	a, err := New(Config{DataDir: t.TempDir(), ModelsDir: testModelsDir(t), Emitter: ev, Threads: 2, NoSpeedProbe: true,
		ChatMaxTokens: 5})
	require.NoError(t, err)
	t.Cleanup(func() { a.Close() })
	cv, err := a.Chat.Create("stories")
	require.NoError(t, err)
	for _, prompt := range []string{"Once upon a time there was a little girl", "Tell me a very long story about a dog"} {
		msg, err := a.Chat.Send(cv.ID, prompt)
		require.NoError(t, err)
		done := ev.wait(t, "chat:done", func(d any) bool { return d.(ChatDone).MessageID == msg.ID }, 60*time.Second).(ChatDone)
		require.Empty(t, done.Error)
		require.False(t, done.Stopped)
		require.NotEmpty(t, done.Content)
		n := tokenEvents(ev, msg.ID)
		require.LessOrEqual(t, n, 5, "%q: tokens streamed (answer %q)", prompt, done.Content)
		require.Positive(t, n)
	}
}

// tokenEvents counts the "chat:token" events of message id.
func tokenEvents(ev *events, id int64) int {
	n := 0
	for _, d := range ev.named("chat:token") {
		if d.(ChatToken).MessageID == id {
			n++
		}
	}
	return n
}
