package modelfile

import (
	"math"
	"strings"

	"github.com/harkapp/hark/engine/ggmlbin"
	"github.com/harkapp/hark/engine/gguf"
)

// MaxArray is the longest array whose values Summarize keeps; longer ones
// become an ArraySummary.
const MaxArray = 16

// ArraySummary stands in for a long array.
type ArraySummary struct {
	Type string `json:"type"` // element type, e.g. "string"
	Len  int    `json:"len"`
}

// Summarize converts a metadata value into something printable and
// JSON-safe: scalars stay (non-finite floats become strings, which JSON
// cannot hold otherwise), short arrays become slices of summarised
// values, long arrays an ArraySummary.
func Summarize(v gguf.Value) any {
	switch x := v.Any().(type) {
	case float32:
		return finite(float64(x), x)
	case float64:
		return finite(x, x)
	case *gguf.Array:
		return summarizeArray(x)
	default:
		return x
	}
}

func summarizeArray(a *gguf.Array) any {
	if a.Len() > MaxArray {
		return ArraySummary{Type: a.Elem.String(), Len: a.Len()}
	}
	out := make([]any, a.Len())
	for i := range out {
		out[i] = Summarize(a.Index(i))
	}
	return out
}

func finite(f float64, orig any) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return formatNonFinite(f)
	}
	return orig
}

func formatNonFinite(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case f > 0:
		return "+Inf"
	}
	return "-Inf"
}

func (f *File) fromGGUF(g *gguf.File) {
	f.Architecture = g.Architecture()
	for _, kv := range g.KVs {
		f.Metadata = append(f.Metadata, Entry{kv.Key, Summarize(kv.Value)})
	}
	for _, t := range g.Tensors {
		f.Tensors = append(f.Tensors, Tensor{t.Name, t.Type, t.Shape, t.Offset, t.Bytes})
	}
	f.Tokenizer = ggufTokenizer(g)
}

func ggufTokenizer(g *gguf.File) *Tokenizer {
	tok := &Tokenizer{Special: map[string]int64{}}
	found := false
	if s, err := g.GetString("tokenizer.ggml.model"); err == nil {
		tok.Model, found = s, true
	}
	tok.Pre, _ = g.GetString("tokenizer.ggml.pre")
	if a, err := g.GetArray("tokenizer.ggml.tokens"); err == nil {
		tok.Tokens, found = a.Len(), true
		tok.VocabSize = a.Len()
	}
	if a, err := g.GetArray("tokenizer.ggml.merges"); err == nil {
		tok.Merges = a.Len()
	}
	if a, err := g.GetArray("tokenizer.ggml.scores"); err == nil {
		tok.Scores = a.Len()
	}
	if a, err := g.GetArray("tokenizer.ggml.token_type"); err == nil {
		tok.TokenTypes = a.Len()
	}
	for _, kv := range g.KVs {
		name, ok := strings.CutPrefix(kv.Key, "tokenizer.ggml.")
		if !ok {
			continue
		}
		if name, ok = strings.CutSuffix(name, "_token_id"); ok {
			if id, ok := kv.Value.Int(); ok {
				tok.Special[name] = id
			}
		}
	}
	if !found {
		return nil
	}
	if len(tok.Special) == 0 {
		tok.Special = nil
	}
	return tok
}

func (f *File) fromGGML(g *ggmlbin.File) {
	f.Architecture = "whisper"
	h := g.HParams
	for i, v := range h.Values() {
		f.Metadata = append(f.Metadata, Entry{"whisper." + ggmlbin.HParamNames[i], v})
	}
	f.Metadata = append(f.Metadata,
		Entry{"whisper.file_type", h.FileType()},
		Entry{"whisper.quantization_version", h.QuantVersion()},
		Entry{"whisper.mel_filters.shape", []int64{int64(g.Mel.NMel), int64(g.Mel.NFFT)}},
		Entry{"tokenizer.tokens", len(g.Vocab)},
	)
	for _, t := range g.Tensors {
		f.Tensors = append(f.Tensors, Tensor{t.Name, t.Type, t.Shape, t.Offset, t.Bytes})
	}
	f.Tokenizer = &Tokenizer{Model: "whisper", VocabSize: int(h.NVocab), Tokens: len(g.Vocab)}
}
