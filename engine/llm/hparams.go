package llm

import (
	"fmt"
	"strings"

	"github.com/harkapp/hark/engine/gguf"
)

// RopeScaling is how positions beyond the training context are squeezed
// into the rotary frequencies.
type RopeScaling struct {
	// Type: "" or "none", "linear" (positions divided by Factor) or
	// "llama3" (Llama 3.1's per-frequency smoothing).
	Type           string
	Factor         float64
	OrigCtx        int     // llama3: original_context_length
	LowFreqFactor  float64 // llama3
	HighFreqFactor float64 // llama3
}

// HParams are a model's hyper-parameters, read from GGUF metadata
// (<arch>.* keys) and tensor shapes.
type HParams struct {
	NLayer   int
	NEmbd    int
	NFF      int
	NHead    int
	NKV      int
	HeadDim  int
	NVocab   int
	NCtx     int // training context (<arch>.context_length)
	Eps      float32
	RopeBase float64
	RopeDim  int
	Scaling  RopeScaling
	// Window is the sliding window of Arch.SlidingPattern's local layers
	// (<arch>.attention.sliding_window; 0 without them).
	Window int
}

// QDim is the width of the Q projection (nHead heads); it differs from
// NEmbd when the file sets attention.key_length (Qwen3).
func (h HParams) QDim() int { return h.NHead * h.HeadDim }

// KVDim is the width of the K and V projections.
func (h HParams) KVDim() int { return h.NKV * h.HeadDim }

// limits bound every size read from a file, so a corrupt header fails
// cleanly instead of asking for an absurd allocation.
const (
	maxLayers = 1024
	maxWidth  = 1 << 17
	maxHeads  = 1024
	maxVocab  = 1 << 22
	maxCtx    = 1 << 22
)

// ReadHParams reads the hyper-parameters of architecture a from f.
func ReadHParams(f *gguf.File, a Arch) (HParams, error) {
	key := func(k string) string { return a.Name + "." + k }
	var err error
	geti := func(k string, def int64, required bool) int {
		if err != nil {
			return 0
		}
		v, ok := f.Get(key(k))
		if !ok {
			if required {
				err = fmt.Errorf("llm: %s metadata has no %s", a.Name, key(k))
			}
			return int(def)
		}
		n, ok := v.Int()
		if !ok {
			err = fmt.Errorf("llm: metadata key %s is %s, want an integer", key(k), v.Type())
			return 0
		}
		if n < 0 || n > maxCtx {
			err = fmt.Errorf("llm: metadata key %s = %d is out of range", key(k), n)
			return 0
		}
		return int(n)
	}
	getf := func(k string, def float64) float64 {
		if err != nil {
			return 0
		}
		v, ok := f.Get(key(k))
		if !ok {
			return def
		}
		x, ok := v.Float()
		if !ok {
			err = fmt.Errorf("llm: metadata key %s is %s, want a float", key(k), v.Type())
		}
		return x
	}
	var h HParams
	h.NLayer = geti("block_count", 0, true)
	h.NEmbd = geti("embedding_length", 0, true)
	h.NFF = geti("feed_forward_length", 0, true)
	h.NHead = geti("attention.head_count", 0, true)
	h.NKV = geti("attention.head_count_kv", int64(h.NHead), false)
	h.NCtx = geti("context_length", 2048, false)
	h.Eps = float32(getf("attention.layer_norm_rms_epsilon", 1e-5))
	h.RopeBase = getf("rope.freq_base", 10000)
	if err != nil {
		return HParams{}, err
	}
	if h.NHead == 0 || h.NHead > maxHeads {
		return HParams{}, fmt.Errorf("llm: %d attention heads", h.NHead)
	}
	h.HeadDim = geti("attention.key_length", int64(h.NEmbd/h.NHead), false)
	vd := geti("attention.value_length", int64(h.HeadDim), false)
	h.RopeDim = geti("rope.dimension_count", int64(h.HeadDim), false)
	h.Scaling.Type, _ = f.GetString(key("rope.scaling.type"))
	h.Scaling.Factor = getf("rope.scaling.factor", 0)
	if lin := getf("rope.scale_linear", 0); lin != 0 && h.Scaling.Factor == 0 {
		// the older key of linear scaling
		h.Scaling.Type, h.Scaling.Factor = "linear", lin
	}
	h.Scaling.OrigCtx = geti("rope.scaling.original_context_length", 8192, false)
	h.Scaling.LowFreqFactor = getf("rope.scaling.low_freq_factor", 1)
	h.Scaling.HighFreqFactor = getf("rope.scaling.high_freq_factor", 4)
	if a.SlidingPattern > 0 {
		h.Window = geti("attention.sliding_window", 0, true)
		if err == nil && h.Window == 0 {
			err = fmt.Errorf("llm: %s has a sliding window of 0 positions", key("attention.sliding_window"))
		}
	}
	if err != nil {
		return HParams{}, err
	}
	if vd != h.HeadDim {
		return HParams{}, fmt.Errorf("llm: key length %d differs from value length %d", h.HeadDim, vd)
	}
	// the vocabulary is the embedding table's height
	b := binder{f: f}
	emb, name, ok := b.find(a.Tensors.TokenEmbd, 0)
	if !ok {
		return HParams{}, fmt.Errorf("llm: the file has no %s", strings.Join(a.Tensors.TokenEmbd, " or "))
	}
	if len(emb.Shape) != 2 || emb.Shape[0] != int64(h.NEmbd) || emb.Shape[1] <= 0 || emb.Shape[1] > maxVocab {
		return HParams{}, fmt.Errorf("llm: %s has shape %v, want [%d, vocab]", name, emb.Shape, h.NEmbd)
	}
	h.NVocab = int(emb.Shape[1])
	return h, h.Validate()
}

// Validate checks the numbers are consistent and within bounds.
func (h HParams) Validate() error {
	switch {
	case h.NLayer <= 0 || h.NLayer > maxLayers:
		return fmt.Errorf("llm: %d layers", h.NLayer)
	case h.NEmbd <= 0 || h.NEmbd > maxWidth || h.NFF <= 0 || h.NFF > 8*maxWidth:
		return fmt.Errorf("llm: widths %d (embedding) and %d (feed-forward) out of range", h.NEmbd, h.NFF)
	case h.NHead <= 0 || h.NHead > maxHeads || h.NKV <= 0 || h.NHead%h.NKV != 0:
		return fmt.Errorf("llm: %d query heads cannot share %d KV heads", h.NHead, h.NKV)
	case h.HeadDim <= 0 || h.HeadDim > 1024 || h.QDim() > 4*maxWidth:
		return fmt.Errorf("llm: head size %d out of range", h.HeadDim)
	case h.RopeDim <= 0 || h.RopeDim > h.HeadDim || h.RopeDim%2 != 0:
		return fmt.Errorf("llm: rope dimension count %d must be even and at most the head size %d", h.RopeDim, h.HeadDim)
	case h.NVocab <= 0 || h.NVocab > maxVocab:
		return fmt.Errorf("llm: vocabulary of %d tokens", h.NVocab)
	case h.NCtx <= 0 || h.NCtx > maxCtx:
		return fmt.Errorf("llm: context length %d out of range", h.NCtx)
	case !(h.Eps > 0 && h.Eps < 1):
		return fmt.Errorf("llm: norm epsilon %g out of range", h.Eps)
	case !(h.RopeBase > 1):
		return fmt.Errorf("llm: rope frequency base %g out of range", h.RopeBase)
	}
	return nil
}
