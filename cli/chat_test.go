package cli

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/harkapp/hark/engine/gguf"
	"github.com/harkapp/hark/engine/llm/parity"
	"github.com/harkapp/hark/internal/shared"
	"github.com/stretchr/testify/require"
)

func runHarkStdin(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := NewRoot(&out, &errOut)
	root.SetIn(strings.NewReader(stdin))
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), errOut.String(), err
}

// TestChatPlain drives `hark chat` through piped stdin on a base model
// (plain template): answers equal `hark generate` on the concatenated
// conversation, continuation lines join with a newline, the second turn
// reuses the cache, /reset starts over and /exit quits.
func TestChatPlain(t *testing.T) {
	model := shared.Path(t, "models", "stories260K.gguf")
	in := "Once upon a time\n\n/help\n The dog\\\nran\n/reset\nLily\n/exit\nnot read\n"
	out, errOut, err := runHarkStdin(t, in, "chat", "--model", model, "--temp", "0", "-n", "20", "--ignore-eos", "-v")
	require.NoError(t, err)
	lines := strings.Split(out, "\n")
	require.Len(t, lines, 4, "three answers, one line each: %q", out)
	require.Equal(t, "", lines[3])
	require.Contains(t, errOut, "plain template")
	require.Contains(t, errOut, "/reset clears the conversation")
	require.Contains(t, errOut, "(conversation cleared)")
	require.NotContains(t, out+errOut, "not read")

	gen := func(prompt string) string {
		o, _, err := runHark(t, "generate", "--model", model, "--temp", "0", "-n", "20", "--ignore-eos", prompt)
		require.NoError(t, err)
		return strings.TrimSuffix(o, "\n")
	}
	require.Equal(t, gen("Once upon a time"), lines[0])
	require.Equal(t, gen("Once upon a time"+lines[0]+" The dog\nran"), lines[1])
	require.Equal(t, gen("Lily"), lines[2])

	reused := regexp.MustCompile(`prompt: (\d+) tokens reused`).FindAllStringSubmatch(errOut, -1)
	require.Len(t, reused, 3)
	require.Equal(t, "0", reused[0][1])
	require.NotEqual(t, "0", reused[1][1])
	require.Equal(t, "1", reused[2][1], "after /reset only BOS is shared")
}

// A model whose GGUF carries tokenizer.chat_template is chatted with
// through that template: the answer equals `hark generate` on the
// rendered prompt.
func TestChatGGUFTemplate(t *testing.T) {
	src := shared.Path(t, "models", "stories260K.gguf")
	path := withChatTemplate(t, src, `{% for m in messages %}{% if m.role == 'user' %}{{ m.content + '.' }}{% else %}{{ m.content }}{% endif %}{% endfor %}{% if add_generation_prompt %}{{ ' Then' }}{% endif %}`)
	out, errOut, err := runHarkStdin(t, "Tim had a ball\n", "chat", "--model", path, "--temp", "0", "-n", "16")
	require.NoError(t, err)
	require.Contains(t, errOut, "gguf template")
	want, _, err := runHark(t, "generate", "--model", path, "--temp", "0", "-n", "16", "Tim had a ball. Then")
	require.NoError(t, err)
	require.Equal(t, want, out)

	// A system message reaches the template.
	path = withChatTemplate(t, src, `{{ messages[0].content }}|{{ messages[0].role }}|{{ raise_exception('no') if messages|length > 2 }}`)
	out, errOut, err = runHarkStdin(t, "x\ny\n", "chat", "--model", path, "--temp", "0", "-n", "4", "--system", "The cat")
	require.NoError(t, err)
	require.NotEmpty(t, strings.TrimSpace(out))
	require.Contains(t, errOut, "error: chat template (gguf): no", "the template's own error is reported and the chat goes on")
}

// --template replaces the model's template; --no-think reaches it as
// enable_thinking=false.
func TestChatTemplateFlags(t *testing.T) {
	model := shared.Path(t, "models", "stories260K.gguf")
	tf := filepath.Join(t.TempDir(), "t.jinja")
	require.NoError(t, os.WriteFile(tf, []byte(`{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}{% if enable_thinking is defined and not enable_thinking %}{{ ' The end' }}{% endif %}`), 0o644))
	for _, noThink := range []bool{false, true} {
		args := []string{"chat", "--model", model, "--template", tf, "--temp", "0", "-n", "12", "--ignore-eos"}
		prompt := "Tom was"
		if noThink {
			args = append(args, "--no-think")
			prompt += " The end"
		}
		out, errOut, err := runHarkStdin(t, "Tom was\n", args...)
		require.NoError(t, err)
		require.Contains(t, errOut, "t.jinja template")
		// The template writes BOS itself, so none is added: the same
		// tokens as generate's BOS + prompt.
		want, _, err := runHark(t, "generate", "--model", model, "--temp", "0", "-n", "12", "--ignore-eos", prompt)
		require.NoError(t, err)
		require.Equal(t, want, out, "no-think=%v", noThink)
	}
	_, _, err := runHarkStdin(t, "", "chat", "--model", model, "--template", filepath.Join(t.TempDir(), "none.jinja"))
	require.Error(t, err)
}

func TestChatErrors(t *testing.T) {
	model := shared.Path(t, "models", "stories260K.gguf")
	long := strings.Repeat("Once upon a time there was a girl. ", 6)
	out, errOut, err := runHarkStdin(t, long+"\nHi\n", "chat", "--model", model, "--temp", "0", "-n", "4", "--ctx", "32")
	require.NoError(t, err, "a conversation too long for the context is reported, not fatal")
	require.Contains(t, errOut, "the conversation is longer than the context")
	require.Contains(t, errOut, "/reset")
	require.Equal(t, 1, strings.Count(out, "\n"), "the short message after it is answered: %q", out)

	_, _, err = runHarkStdin(t, "", "chat")
	require.ErrorContains(t, err, "--model")
	_, _, err = runHarkStdin(t, "", "chat", "--model", filepath.Join(t.TempDir(), "missing.gguf"))
	require.Error(t, err)
}

// withChatTemplate copies a GGUF model adding tokenizer.chat_template.
func withChatTemplate(t *testing.T, src, tpl string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "templated.gguf")
	require.NoError(t, gguf.Rewrite(src, path, map[string]gguf.Value{"tokenizer.chat_template": gguf.String(tpl)}))
	return path
}

// `hark chat` on Gemma 3: the synthetic transformers Gemma 3 of
// testdata/gemma3 converted with the real Gemma 3 vocabulary (as llama.cpp
// writes it) and chat template renders the conversation through the
// Gemma template: the answer equals `hark generate` on the rendering
// transformers' apply_chat_template gives (BOS added by generate).
func TestChatGemma3Template(t *testing.T) {
	vocab, err := parity.Gemma3Vocab(shared.Path(t, "llm-kit", "tokenizers", "gemma3"))
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "gemma3-tiny-chat.gguf")
	fh, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, parity.WriteGemma3(shared.Fixture(t, "gemma3"), fh, vocab))
	require.NoError(t, fh.Close())
	out, errOut, err := runHarkStdin(t, "Hello\n", "chat", "--model", path, "--temp", "0", "-n", "12", "--ignore-eos")
	require.NoError(t, err)
	require.Contains(t, errOut, "gguf template")
	// tools/parity/gemma3_hf.py recorded this rendering (testdata/gemma3/gemma3.tokref.json, "single")
	want, _, err := runHark(t, "generate", "--model", path, "--temp", "0", "-n", "12", "--ignore-eos",
		"<start_of_turn>user\nHello<end_of_turn>\n<start_of_turn>model\n")
	require.NoError(t, err)
	require.NotEmpty(t, strings.TrimSpace(out))
	require.Equal(t, want, out)
}

// `hark chat` and the API answer a conversation through the same chat
// turn: the same conversation gets the same answers from both.
func TestChatSameAsAPI(t *testing.T) {
	model := shared.Path(t, "models", "stories260K.gguf")
	turns := []string{"Once upon a time", " The dog was"}
	out, _, err := runHarkStdin(t, strings.Join(turns, "\n")+"\n", "chat", "--model", model, "--temp", "0", "-n", "12")
	require.NoError(t, err)
	answers := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, answers, 2, "%q", out)

	url := serveStories(t, model, 2)
	var conv []map[string]string
	for i, user := range turns {
		conv = append(conv, map[string]string{"role": "user", "content": user})
		body, err := json.Marshal(map[string]any{"model": "stories", "messages": conv, "max_tokens": 12, "temperature": 0})
		require.NoError(t, err)
		resp, err := http.Post(url+"/v1/chat/completions", "application/json", bytes.NewReader(body))
		require.NoError(t, err)
		var got struct {
			Choices []struct {
				Message struct{ Content string }
			}
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Equal(t, answers[i], got.Choices[0].Message.Content, "turn %d", i)
		conv = append(conv, map[string]string{"role": "assistant", "content": answers[i]})
	}
}
