package chat

import (
	"context"
	"testing"

	"github.com/harkapp/hark/engine/cpu"
	"github.com/harkapp/hark/engine/gguf"
	"github.com/harkapp/hark/engine/llm"
	"github.com/harkapp/hark/engine/tokenizer"
	"github.com/harkapp/hark/internal/shared"
	"github.com/stretchr/testify/require"
)

func loadStories(t *testing.T, ctx int) (*llm.Generator, *gguf.File) {
	t.Helper()
	f, err := gguf.Open(shared.Path(t, "models", "stories260K.gguf"))
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	tk, err := tokenizer.FromGGUFFile(f)
	require.NoError(t, err)
	be := cpu.New(cpu.Options{})
	t.Cleanup(func() { be.Close() })
	m, err := llm.Load(be, f, llm.Options{Context: ctx})
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	return llm.NewGenerator(m, tk), f
}

// A second turn reuses the cached prefix and gives exactly the answer a
// fresh model gives for the whole conversation.
func TestSessionPrefixReuse(t *testing.T) {
	g, f := loadStories(t, 256)
	tpl, err := ForModel(f, g.Tk)
	require.NoError(t, err)
	s := &Session{Gen: g, Template: tpl, AddBOS: true}
	o := llm.GenerateOptions{MaxTokens: 24, IgnoreEOS: true}
	r1, err := s.Send(context.Background(), "Once upon a time", o, nil)
	require.NoError(t, err)
	require.Equal(t, 0, s.Reused)
	require.Len(t, r1.Tokens, 24)

	r2, err := s.Send(context.Background(), " The dog was", o, nil)
	require.NoError(t, err)
	first := len(g.PromptTokens("Once upon a time", true))
	require.Greater(t, s.Reused, first+10, "the first prompt and most of its answer come from the cache")
	require.Equal(t, []Message{{"user", "Once upon a time"}, {"assistant", r1.Text}, {"user", " The dog was"}, {"assistant", r2.Text}}, s.Messages())

	// Fresh model, whole conversation at once.
	g.M.Reset()
	text, err := tpl.Render(s.Messages()[:3], Options{AddGenerationPrompt: true})
	require.NoError(t, err)
	want, err := g.Generate(context.Background(), g.PromptTokens(text, true), o, nil)
	require.NoError(t, err)
	require.Equal(t, want.Tokens, r2.Tokens)
	require.Equal(t, want.Text, r2.Text)

	// After Reset the conversation starts over; only BOS is shared.
	s.Reset()
	_, err = s.Send(context.Background(), "Lily", o, nil)
	require.NoError(t, err)
	require.Equal(t, 1, s.Reused)
	require.Len(t, s.Messages(), 2)
}

// Repeating the very same prompt still feeds its last token (for logits).
func TestSessionSamePrompt(t *testing.T) {
	g, f := loadStories(t, 128)
	tpl, err := ForModel(f, g.Tk)
	require.NoError(t, err)
	s := &Session{Gen: g, Template: tpl, AddBOS: true}
	o := llm.GenerateOptions{MaxTokens: 8, IgnoreEOS: true}
	a, err := s.Send(context.Background(), "The cat", o, nil)
	require.NoError(t, err)
	s.Reset()
	b, err := s.Send(context.Background(), "The cat", o, nil)
	require.NoError(t, err)
	require.Equal(t, len(g.PromptTokens("The cat", true))-1, s.Reused)
	require.Equal(t, a.Tokens, b.Tokens)
}

func TestSessionContextErrors(t *testing.T) {
	g, f := loadStories(t, 32)
	tpl, err := ForModel(f, g.Tk)
	require.NoError(t, err)
	s := &Session{Gen: g, Template: tpl, AddBOS: true}
	o := llm.GenerateOptions{MaxTokens: 8, IgnoreEOS: true}
	_, err = s.Send(context.Background(), "Once upon a time there was a little girl named Lily who loved to play outside in the park with her dog", o, nil)
	require.ErrorIs(t, err, ErrConversationTooLong)
	require.Empty(t, s.Messages(), "a turn that did not fit is not recorded")
	// Turns that fit until the answer runs into the end of the context.
	var last error
	for range 6 {
		if _, last = s.Send(context.Background(), " Then", o, nil); last != nil {
			break
		}
	}
	require.ErrorIs(t, last, ErrConversationTooLong)
	s.Reset()
	_, err = s.Send(context.Background(), "Hi", o, nil)
	require.NoError(t, err)
}

// A canceled answer ends the turn early and keeps what was written.
func TestSessionCancel(t *testing.T) {
	g, f := loadStories(t, 128)
	tpl, err := ForModel(f, g.Tk)
	require.NoError(t, err)
	s := &Session{Gen: g, Template: tpl, AddBOS: true}
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	res, err := s.Send(ctx, "Once", llm.GenerateOptions{MaxTokens: 100, IgnoreEOS: true}, func(string) error {
		if n++; n == 3 {
			cancel()
		}
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, llm.StopCanceled, res.Reason)
	require.Less(t, len(res.Tokens), 10)
	require.Equal(t, res.Text, s.Messages()[1].Content)
}

// With Fit, a conversation that would leave too little room for the
// answer loses its oldest turns (the system message stays) and gets the
// answer the shortened conversation gets; without it, it is refused.
func TestSessionFit(t *testing.T) {
	g, f := loadStories(t, 64)
	tpl, err := ForModel(f, g.Tk)
	require.NoError(t, err)
	long := "Once upon a time there was a little girl named Lily who loved to play"
	conv := []Message{{"system", "Lily"}, {"user", long}, {"assistant", long}, {"user", long}, {"assistant", long}, {"user", " The dog"}}
	// Rendered, it has 93 tokens; without its first turn 71, without
	// two 49 (too many for the 16 of room), without three 27.
	o := llm.GenerateOptions{MaxTokens: 6, IgnoreEOS: true}

	s := &Session{Gen: g, Template: tpl, AddBOS: true}
	_, err = s.Reply(context.Background(), conv, o, nil)
	require.ErrorIs(t, err, ErrConversationTooLong)

	s.Fit = true
	got, err := s.Reply(context.Background(), conv, o, nil)
	require.NoError(t, err)
	require.LessOrEqual(t, got.PromptTokens+FitRoom(64), 64)

	g.M.Reset()
	plain := &Session{Gen: g, Template: tpl, AddBOS: true}
	want, err := plain.Reply(context.Background(), []Message{conv[0], conv[4], conv[5]}, o, nil)
	require.NoError(t, err)
	require.Equal(t, 27, want.PromptTokens)
	require.Equal(t, want.Tokens, got.Tokens, "the three oldest turns dropped, the system message kept")
}
