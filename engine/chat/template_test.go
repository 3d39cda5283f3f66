package chat

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harkapp/hark/engine/gguf"
	"github.com/harkapp/hark/engine/tokenizer"
	"github.com/harkapp/hark/internal/shared"
	"github.com/stretchr/testify/require"
)

var convo = []Message{{"user", "Hi"}, {"assistant", "Hello!"}, {"user", "Bye"}}

func TestChatMLFallback(t *testing.T) {
	got, err := ChatML(SpecialTokens{}).Render(convo, Options{AddGenerationPrompt: true})
	require.NoError(t, err)
	require.Equal(t, "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello!<|im_end|>\n<|im_start|>user\nBye<|im_end|>\n<|im_start|>assistant\n", got)
	got, err = ChatML(SpecialTokens{}).Render(convo[:1], Options{})
	require.NoError(t, err)
	require.Equal(t, "<|im_start|>user\nHi<|im_end|>\n", got)
}

// The ChatML fallback must agree with SmolLM2's own template once its
// default system prompt is given explicitly.
func TestChatMLFallbackMatchesSmolLM2(t *testing.T) {
	cfg, err := FromTokenizerConfig(shared.Path(t, "llm-kit", "tokenizers", "smollm2", "tokenizer_config.json"))
	require.NoError(t, err)
	msgs := append([]Message{{"system", "Be brief."}}, convo...)
	want, err := cfg.Render(msgs, Options{AddGenerationPrompt: true})
	require.NoError(t, err)
	got, err := ChatML(cfg.Special()).Render(msgs, Options{AddGenerationPrompt: true})
	require.NoError(t, err)
	require.Equal(t, want, got)
}

func TestPlainFallbackExtends(t *testing.T) {
	p := Plain(SpecialTokens{BOS: "<s>"})
	a, err := p.Render(convo[:1], Options{AddGenerationPrompt: true})
	require.NoError(t, err)
	require.Equal(t, "Hi", a)
	b, err := p.Render(convo, Options{AddGenerationPrompt: true})
	require.NoError(t, err)
	require.Equal(t, "HiHello!Bye", b)
}

func TestFallbackChoice(t *testing.T) {
	has := func(set ...string) func(string) bool {
		return func(s string) bool {
			for _, x := range set {
				if x == s {
					return true
				}
			}
			return false
		}
	}
	require.Equal(t, "chatml", Fallback(SpecialTokens{}, has("<|im_start|>", "<|im_end|>")).Name)
	require.Equal(t, "plain", Fallback(SpecialTokens{}, has("<|im_start|>")).Name)
	require.Equal(t, "plain", Fallback(SpecialTokens{}, has()).Name)
}

// Llama 3.2's template dates the system header with strftime_now when no
// date_string is passed; with the clock at the kit's date the rendering
// equals the reference made with date_string.
func TestStrftimeNow(t *testing.T) {
	dir := shared.Path(t, "llm-kit", "tokenizers", "llama3")
	src, err := os.ReadFile(filepath.Join(dir, "meta-llama-Llama-3.2-3B-Instruct.jinja"))
	require.NoError(t, err)
	tpl, err := New("llama3.2", string(src), SpecialTokens{BOS: "<|begin_of_text|>", EOS: "<|eot_id|>"})
	require.NoError(t, err)
	want, err := tpl.Render(convo, Options{AddGenerationPrompt: true, Vars: map[string]any{"date_string": "26 Jul 2024"}})
	require.NoError(t, err)
	tpl.Now = func() time.Time { return time.Date(2024, 7, 26, 12, 0, 0, 0, time.UTC) }
	got, err := tpl.Render(convo, Options{AddGenerationPrompt: true})
	require.NoError(t, err)
	require.Equal(t, want, got)
	tpl.Now = func() time.Time { return time.Date(2025, 1, 5, 0, 0, 0, 0, time.UTC) }
	got, err = tpl.Render(convo, Options{AddGenerationPrompt: true})
	require.NoError(t, err)
	require.Contains(t, got, "Today Date: 05 Jan 2025\n")
}

func TestStrftime(t *testing.T) {
	tm := time.Date(2024, 3, 9, 15, 4, 5, 0, time.UTC)
	require.Equal(t, "09 Mar 2024 15:04:05 PM Saturday March 069 %q 100%", strftime(tm, "%d %b %Y %H:%M:%S %p %A %B %j %q 100%%"))
}

func TestRaiseException(t *testing.T) {
	tpl, err := New("strict", `{% if messages[0]['role'] != 'user' %}{{ raise_exception('Conversations must start with a user message') }}{% endif %}ok`, SpecialTokens{})
	require.NoError(t, err)
	_, err = tpl.Render([]Message{{"assistant", "x"}}, Options{})
	require.ErrorIs(t, err, ErrTemplate)
	require.Contains(t, err.Error(), "Conversations must start with a user message")
	out, err := tpl.Render([]Message{{"user", "x"}}, Options{})
	require.NoError(t, err)
	require.Equal(t, "ok", out)
}

// tojson follows Python's json.dumps(ensure_ascii=False): ", " and ": "
// separators, non-ASCII kept, Python float and bool spellings.
func TestToJSON(t *testing.T) {
	tpl, err := New("json", `{{ tools | tojson }}|{{ tools[0] | tojson(indent=2) }}`, SpecialTokens{})
	require.NoError(t, err)
	tools := []any{map[string]any{"name": "météo", "args": []any{1, 2.5, 3.0, true, nil, "a\"b<c>"}}}
	out, err := tpl.Render(nil, Options{Vars: map[string]any{"tools": tools}})
	require.NoError(t, err)
	require.Equal(t, `[{"args": [1, 2.5, 3.0, true, null, "a\"b<c>"], "name": "météo"}]|{
  "args": [
    1,
    2.5,
    3.0,
    true,
    null,
    "a\"b<c>"
  ],
  "name": "météo"
}`, out)
}

func TestBadTemplates(t *testing.T) {
	for _, src := range []string{"{% for m in messages %}", "{{ messages[ }}", "{% endif %}", "{% include 'x.j2' %}"} {
		tpl, err := New("bad", src, SpecialTokens{})
		if err == nil {
			_, err = tpl.Render(convo, Options{})
		}
		require.Error(t, err, "%q", src)
	}
}

// Templates that would loop or print without bound fail instead.
func TestRenderBounds(t *testing.T) {
	tpl, err := New("huge", `{% for i in range(100000000) %}x{% endfor %}`, SpecialTokens{})
	require.NoError(t, err)
	_, err = tpl.Render(nil, Options{})
	require.ErrorContains(t, err, "more than 100000")

	x := strings.Repeat("x", 1000)
	tpl, err = New("nested", `{% for i in range(10000) %}{% for j in range(10000) %}`+x+`{% endfor %}{% endfor %}`, SpecialTokens{})
	require.NoError(t, err)
	_, err = tpl.Render(nil, Options{})
	require.ErrorContains(t, err, "exceeds")

	tpl, err = New("ranges", `{{ range(3)|list }} {{ range(1, 7, 2)|list }} {{ range(5, 0, -2)|list }} {{ range(0)|list }}{% for i in range(2, 4) %}{{ i }}{% endfor %}`, SpecialTokens{})
	require.NoError(t, err)
	out, err := tpl.Render(nil, Options{})
	require.NoError(t, err)
	require.Equal(t, "[0, 1, 2] [1, 3, 5] [5, 3, 1] []23", out)
}

func TestTokenizerConfigVariants(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) string {
		p := filepath.Join(dir, "tokenizer_config.json")
		require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
		return p
	}
	tpl, err := FromTokenizerConfig(write(`{"bos_token":{"content":"<s>"},"eos_token":null}`))
	require.NoError(t, err)
	require.Nil(t, tpl)
	tpl, err = FromTokenizerConfig(write(`{"bos_token":{"content":"<s>"},"chat_template":[{"name":"tool_use","template":"T"},{"name":"default","template":"{{ bos_token }}D"}]}`))
	require.NoError(t, err)
	out, err := tpl.Render(nil, Options{})
	require.NoError(t, err)
	require.Equal(t, "<s>D", out)
	_, err = FromTokenizerConfig(write(`{"chat_template":[{"name":"tool_use","template":"T"}]}`))
	require.Error(t, err)
	_, err = FromTokenizerConfig(write(`{"chat_template":42}`))
	require.Error(t, err)
	_, err = FromTokenizerConfig(filepath.Join(dir, "missing.json"))
	require.Error(t, err)
}

// A GGUF without tokenizer.chat_template (stories260K, a base model) gets
// the plain fallback with its BOS/EOS texts.
func TestForModelFallback(t *testing.T) {
	f, err := gguf.Open(shared.Path(t, "models", "stories260K.gguf"))
	require.NoError(t, err)
	defer f.Close()
	tk, err := tokenizer.FromGGUFFile(f)
	require.NoError(t, err)
	tpl, err := ForModel(f, tk)
	require.NoError(t, err)
	require.Equal(t, "plain", tpl.Name)
	require.Equal(t, SpecialTokens{BOS: "<s>", EOS: "</s>"}, tpl.Special())
}

// A conditional expression in parentheses at the end of a concatenation
// (Gemma 3's template) renders as Jinja renders it.
func TestTrailingConditional(t *testing.T) {
	src := `{%- for m in messages -%}{{- '<' + m['role'] + '>' + ('first:' if loop.first else "") }}{{ m['content'] }}{%- endfor -%}`
	tpl, err := New("t", src, SpecialTokens{})
	require.NoError(t, err)
	got, err := tpl.Render([]Message{{Role: "user", Content: "a"}, {Role: "model", Content: "b"}}, Options{})
	require.NoError(t, err)
	require.Equal(t, "<user>first:a<model>b", got)
}
