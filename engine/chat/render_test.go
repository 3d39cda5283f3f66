package chat

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

// Hostile templates are stopped within the bound with a clear error, and
// rendering keeps working afterwards.
func TestRenderBudget(t *testing.T) {
	defer func(d time.Duration) { RenderTimeout = d }(RenderTimeout)
	RenderTimeout = time.Second
	good, err := New("good", `{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}`, SpecialTokens{})
	require.NoError(t, err)
	check := func() {
		out, err := good.Render(convo[:1], Options{})
		require.NoError(t, err)
		require.Equal(t, "<"+convo[0].Role+">"+convo[0].Content, out)
	}

	// Nested loops that print nothing: 10^15 steps.
	loop, err := New("loop", `{% for i in range(100000) %}{% for j in range(100000) %}{% for k in range(100000) %}{% endfor %}{% endfor %}{% endfor %}`, SpecialTokens{})
	require.NoError(t, err)
	start := time.Now()
	_, err = loop.Render(nil, Options{})
	require.ErrorIs(t, err, ErrTemplateTimeout)
	require.Less(t, time.Since(start), RenderTimeout+shared.Wait(t, 2*time.Second))
	check()

	// A string doubled by {% set %} (2^60 bytes; gonja's string ops are
	// slow enough that the deadline usually stops it first) and a single
	// huge string (the memory bound stops it).
	for src, want := range map[string][]error{
		`{% set ns = namespace(s="xxxxxxxx") %}{% for i in range(60) %}{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s|length }}`: {ErrTemplateMemory, ErrTemplateTimeout},
		`{{ ("x" * 100000000000)|length }}`: {ErrTemplateMemory},
	} {
		double, err := New("double", src, SpecialTokens{})
		require.NoError(t, err)
		start = time.Now()
		_, err = double.Render(nil, Options{})
		require.Error(t, err)
		require.True(t, errors.Is(err, want[0]) || len(want) > 1 && errors.Is(err, want[1]), "%s: %v", src, err)
		require.Less(t, time.Since(start), RenderTimeout+shared.Wait(t, 2*time.Second))
		check()
	}

	// A cancelled request stops the rendering, long before the bound: with
	// a bound of a minute, returning sooner is the cancellation's doing
	// (however busy the machine; a 1-s bound took 1.3 s at load 15).
	RenderTimeout = time.Minute
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start = time.Now()
	_, err = loop.RenderContext(ctx, nil, Options{})
	require.ErrorIs(t, err, context.Canceled)
	require.Less(t, time.Since(start), RenderTimeout/2)
	check()
}

// BenchmarkRender measures one rendering of ChatML in a child process
// against the same rendering in this process: the difference is the cost
// of the bound (go test -run X -bench Render ./engine/chat).
func BenchmarkRender(b *testing.B) {
	tpl := ChatML(SpecialTokens{})
	b.Run("child", func(b *testing.B) {
		for b.Loop() {
			_, err := tpl.Render(convo, Options{AddGenerationPrompt: true})
			require.NoError(b, err)
		}
	})
	b.Run("inprocess", func(b *testing.B) {
		for b.Loop() {
			_, err := tpl.renderHere(convo, nil, true)
			require.NoError(b, err)
		}
	})
}

// deepTemplate is a template of depth nested parentheses (200 KB at
// 100,000): gonja's parser recurses once per level, past any stack.
func deepTemplate(depth int) string {
	return "{{ " + strings.Repeat("(", depth) + "1" + strings.Repeat(")", depth) + " }}"
}

// TestHostileParse: templates whose parsing would overflow the stack, which
// no recover can catch, are parsed in the child: New fails with a clear
// error, this process lives on, and honest templates still parse.
func TestHostileParse(t *testing.T) {
	for name, src := range map[string]string{
		"parentheses": deepTemplate(100000),
		"brackets":    "{{ " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + " }}",
		"ifs":         strings.Repeat("{% if 1 %}", 40000) + strings.Repeat("{% endif %}", 40000),
	} {
		_, err := New("gguf", src, SpecialTokens{})
		require.Error(t, err, name)
		require.ErrorContains(t, err, "parsing the gguf template", name)
		require.NotContains(t, err.Error(), "goroutine", name)
		require.ErrorContains(t, Check("gguf", src), "template", name)
	}
	tpl, err := New("gguf", deepTemplate(20), SpecialTokens{})
	require.NoError(t, err)
	out, err := tpl.Render(nil, Options{})
	require.NoError(t, err)
	require.Equal(t, "1", out)
	require.NoError(t, Check("gguf", "{{ messages }}"))
}

// TestLimitBufferKeepsTheHead: a child's stderr arrives in pipe-sized
// reads, so its first lines (how the runtime died) can come in one write
// with kilobytes of traceback; the buffer keeps that write's head instead
// of dropping it whole, and refuses what is past its limit.
func TestLimitBufferKeepsTheHead(t *testing.T) {
	l := &limitBuffer{max: 64}
	n, err := l.Write([]byte("abc"))
	require.NoError(t, err)
	require.Equal(t, 3, n)
	head := "runtime: goroutine stack exceeds 1000000000-byte limit\n"
	n, err = l.Write([]byte(head + strings.Repeat("traceback ", 1000)))
	require.ErrorIs(t, err, io.ErrShortWrite)
	require.Equal(t, 61, n)
	require.Equal(t, 64, l.b.Len())
	require.Contains(t, l.b.String(), "stack exceeds")
	n, err = l.Write([]byte("more"))
	require.ErrorIs(t, err, io.ErrShortWrite)
	require.Zero(t, n)
	require.Equal(t, 64, l.b.Len())
}
