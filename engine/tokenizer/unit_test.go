package tokenizer

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/harkapp/hark/internal/shared"
	"github.com/stretchr/testify/require"
)

func loadKit(t testing.TB, elem ...string) *Tokenizer {
	t.Helper()
	tk, err := Load(shared.Path(t, append([]string{"llm-kit", "tokenizers"}, elem...)...))
	require.NoError(t, err)
	return tk
}

// TestStreamDecoderHoldsPartialUTF8: a character spread over byte-fallback
// tokens appears only once its last byte arrived.
func TestStreamDecoderHoldsPartialUTF8(t *testing.T) {
	tk := loadKit(t, "llama2", "tokenizer.model")
	ids := tk.Encode("a🙂b", false)
	// "▁a", then the four <0xF0> <0x9F> <0x99> <0x82> byte tokens, then "b".
	require.Len(t, ids, 6)
	d := tk.NewStreamDecoder(false)
	var got []string
	for _, id := range ids {
		got = append(got, d.Add(id))
	}
	require.Equal(t, []string{"a", "", "", "", "🙂", "b"}, got)
	require.Equal(t, "", d.Flush())

	b := func(x byte) int32 {
		id, ok := tk.TokenID(string([]byte{'<', '0', 'x', "0123456789ABCDEF"[x>>4], "0123456789ABCDEF"[x&15], '>'}))
		require.True(t, ok)
		return id
	}
	// A truncated sequence is one U+FFFD, whether it ends the text or not.
	d = tk.NewStreamDecoder(false)
	require.Equal(t, "", d.Add(b(0xE4)))
	require.Equal(t, "", d.Add(b(0xBD)))
	require.Equal(t, "\uFFFD", d.Flush())
	require.Equal(t, "\uFFFD", tk.Decode([]int32{b(0xE4), b(0xBD)}))
	aID, _ := tk.TokenID("a")
	require.Equal(t, "\uFFFDa", tk.Decode([]int32{b(0xE4), b(0xBD), aID}))
	d = tk.NewStreamDecoder(false)
	require.Equal(t, "", d.Add(b(0xE4)))
	require.Equal(t, "\uFFFDa", d.Add(aID))
	// Bytes that can never start a character are not held.
	d = tk.NewStreamDecoder(false)
	require.Equal(t, "\uFFFD", d.Add(b(0xFF)))
}

// TestStreamDecoderByteLevel: byte-level tokens that split a character.
func TestStreamDecoderByteLevel(t *testing.T) {
	tk := loadKit(t, "smollm2")
	text := "你好，世界！👨\u200d👩\u200d👧 ok"
	ids := tk.Encode(text, false)
	d := tk.NewStreamDecoder(false)
	var sb strings.Builder
	for _, id := range ids {
		s := d.Add(id)
		require.True(t, utf8.ValidString(s))
		require.NotContains(t, s, "\uFFFD")
		sb.WriteString(s)
	}
	sb.WriteString(d.Flush())
	require.Equal(t, text, sb.String())
}

// TestAddedTokenFlags exercises Hugging Face's lstrip/rstrip/single_word.
func TestAddedTokenFlags(t *testing.T) {
	set := newAddedSet([]AddedToken{
		{ID: 1, Content: "<mask>", LStrip: true},
		{ID: 2, Content: "<end>", RStrip: true, Special: true},
		{ID: 3, Content: "cat", SingleWord: true},
		{ID: 4, Content: "<end>x"}, // longest match wins
	})
	type frag struct {
		Text string
		ID   int32
	}
	split := func(s string, special bool) []frag {
		var out []frag
		for _, f := range set.split(nil, s, true, special) {
			out = append(out, frag{f.text, f.id})
		}
		return out
	}
	require.Equal(t, []frag{{"a", -1}, {"", 1}, {" b", -1}}, split("a  <mask> b", true))
	require.Equal(t, []frag{{"a ", -1}, {"", 2}, {"b", -1}}, split("a <end> \n b", true))
	require.Equal(t, []frag{{"a ", -1}, {"", 4}}, split("a <end>x", true))
	require.Equal(t, []frag{{"a ", -1}, {"", 3}, {" concat", -1}}, split("a cat concat", true))
	require.Equal(t, []frag{{"a <end> b", -1}}, split("a <end> b", false), "special tokens are not parsed")
}

// TestParseSpecialOff keeps control tokens in untrusted text as text.
func TestParseSpecialOff(t *testing.T) {
	tk := loadKit(t, "qwen2.5")
	require.Equal(t, []int32{151644}, tk.Encode("<|im_start|>", false))
	plain := tk.EncodeWith("<|im_start|>", EncodeOptions{})
	require.NotContains(t, plain, int32(151644))
	require.Equal(t, "<|im_start|>", tk.Decode(plain))
}

// TestSpecialIDs checks BOS/EOS/EOT/PAD/UNK and vocab sizes of the kits.
func TestSpecialIDs(t *testing.T) {
	for _, tc := range []struct {
		path  []string
		ids   SpecialIDs
		size  int
		stops []int32
	}{
		{[]string{"smollm2"}, SpecialIDs{BOS: 1, EOS: 2, EOT: 2, PAD: 2, UNK: 0}, 49152, []int32{2, 0}},
		{[]string{"qwen2.5"}, SpecialIDs{BOS: -1, EOS: 151645, EOT: 151645, PAD: 151643, UNK: -1}, 151665, []int32{151645, 151643}},
		{[]string{"llama3"}, SpecialIDs{BOS: 128000, EOS: 128009, EOT: 128009, PAD: -1, UNK: -1}, 128256, []int32{128009, 128001}},
		{[]string{"llama3", "tokenizer.model"}, SpecialIDs{BOS: 128000, EOS: 128009, EOT: 128009, PAD: -1, UNK: -1}, 128256, []int32{128009, 128001}},
		{[]string{"phi3-mini"}, SpecialIDs{BOS: 1, EOS: 32000, EOT: 32007, PAD: 32000, UNK: 0}, 32011, []int32{32000, 32007}},
		{[]string{"llama2", "tokenizer.model"}, SpecialIDs{BOS: 1, EOS: 2, EOT: -1, PAD: -1, UNK: 0}, 32000, []int32{2}},
	} {
		tk := loadKit(t, tc.path...)
		require.Equal(t, tc.ids, tk.Special(), "%v", tc.path)
		require.Equal(t, tc.size, tk.VocabSize(), "%v", tc.path)
		require.Equal(t, tc.stops, tk.StopIDs(), "%v", tc.path)
	}
	tk := loadKit(t, "llama3", "tokenizer.model")
	s, ok := tk.Token(128009)
	require.True(t, ok)
	require.Equal(t, "<|eot_id|>", s)
	require.True(t, tk.IsSpecial(128009))
	id, ok := tk.TokenID(" Hello")
	require.True(t, ok)
	require.Equal(t, int32(22691), id)
}

// TestLoadErrors: malformed files give errors, never panics.
func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		return p
	}
	for _, tc := range []struct{ name, content, want string }{
		{"a.json", `{"model":`, "tokenizer.json"},
		{"b.json", `{"model":{"type":"BPE","vocab":{"a":0},"merges":["a b"]}}`, "missing from the vocabulary"},
		{"c.json", `{"model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2},"merges":[]},"pre_tokenizer":{"type":"Split","pattern":{"Regex":"(("},"behavior":"Isolated"}}`, "split pattern"},
		{"d.json", `{"model":{"type":"BPE","vocab":{"a":2000000000},"merges":[]}}`, "too sparse"},
		{"e.json", `{"model":{"type":"BPE","vocab":{},"merges":[]},"normalizer":{"type":"Precompiled"}}`, `"Precompiled"`},
		{"f.model", "\x0a\x05\x0a\x01a\x15", "sentencepiece"},
		{"g.model", "", "no pieces"},
		{"h.model", "YQ== 0\nYg== 5\n", "ranks must be consecutive"},
		{"i.json.gz", "\x1f\x8b\x08\x00garbage", "i.json.gz"},
	} {
		_, err := Load(write(tc.name, tc.content))
		require.ErrorContains(t, err, tc.want, tc.name)
	}
	sub := filepath.Join(dir, "vm")
	require.NoError(t, os.Mkdir(sub, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(sub, "vocab.json"), []byte(`{"a":0}`), 0o644))
	_, err := Load(sub)
	require.ErrorContains(t, err, "merges.txt")
}

// TestLoadGzipAndDirectoryPriority: a gzip tokenizer.json gives the same
// tokenizer as the plain one, and in a directory tokenizer.json wins.
func TestLoadGzipAndDirectoryPriority(t *testing.T) {
	src := shared.Path(t, "llm-kit", "tokenizers", "smollm2", "tokenizer.json")
	data, err := os.ReadFile(src)
	require.NoError(t, err)
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "tokenizer.json.gz"))
	require.NoError(t, err)
	zw := gzip.NewWriter(f)
	_, err = zw.Write(data)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.NoError(t, f.Close())
	// A vocab.json beside it that would fail to load must be ignored.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "vocab.json"), []byte(`not json`), 0o644))
	tk, err := Load(dir)
	require.NoError(t, err)
	require.Equal(t, []int32{2692, 2, 3143, 1694}, tk.Encode("text<|im_end|>more text", false))
}

// FuzzByteLevelRoundTrip: byte-level BPE whose vocabulary covers all 256
// bytes and has no normalizer (Llama 3; SmolLM2 lacks some byte tokens)
// decodes back to exactly the input for any valid UTF-8.
func FuzzByteLevelRoundTrip(f *testing.F) {
	tk := loadKit(f, "llama3", "tokenizer.model")
	tk.dec.cleanup = false // the config's clean_up_tokenization_spaces is lossy by design
	for _, s := range []string{"", "Hello world", "  x\n\n\t", "ied 4 ½ months", "🇯🇵 flag", "<|im_start|>user\nhi"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		require.Equal(t, s, tk.Decode(tk.Encode(s, false)))
	})
}

// FuzzLoadModel: arbitrary tokenizer.model bytes never panic.
func FuzzLoadModel(f *testing.F) {
	f.Add([]byte("\x0a\x05\x0a\x01a\x15\x00\x00\x00\x00"))
	f.Add([]byte("YQ== 0\nYg== 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if looksLikeTiktoken(data) {
			_, _ = parseTiktoken(data, nil)
			return
		}
		_, _ = parseSentencePiece(data, nil)
	})
}
