package cpu

import (
	"bytes"
	"math"
	"path/filepath"
	"testing"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/gguf"
	"github.com/harkapp/hark/engine/llm"
	"github.com/harkapp/hark/engine/llm/bench"
	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/internal/shared"
	"github.com/stretchr/testify/require"
)

// A prefill whose layer blocks run in chunks of rows gives the logits and
// the KV cache of the whole step bit for bit (with chunks so large that
// none is cut: the same attention blocks), at chunk sizes that divide the
// rows and that do not, and its scratch arena touches less memory.
//
// Chunks are cut only where the products run the 8-bit GEMM (rowExact). A
// CPU without VNNI has the AVX2 kernel, whose 5-bit codes cannot take
// q8_0, and prefers a loaded BLAS to it: there the model is q4_0 and the
// GEMM is preferred to the BLAS (the path choice's test override), so the
// chunks run on every machine with a SIMD kernel.
func TestChunkedRunsExact(t *testing.T) {
	require.NotZero(t, qgemmMaxCode, "this CPU has no SIMD quantized GEMM (AVX2 or VNNI), so nothing is chunked")
	saved := qgemmOverBLAS
	qgemmOverBLAS = true
	defer func() { qgemmOverBLAS = saved }()
	typ := ggml.Q8_0
	if panelDecoders[typ].maxCode > qgemmMaxCode {
		typ = ggml.Q4_0
	}
	f, toks := tinyLLMOf(t, 300, typ)
	const batch = 300
	type result struct {
		logits  []float32
		cache   [][]byte
		runs    int
		touched int64
	}
	prefill := func(chunk int64, n int) result {
		be := &recordingBackend{Backend: New(Options{Threads: 2, ChunkRows: int(chunk)})}
		defer be.Close()
		m, err := llm.Load(be, f, llm.Options{Context: 512, Batch: batch})
		require.NoError(t, err)
		defer m.Close()
		var r result
		r.logits, err = m.Prefill(toks[:n])
		require.NoError(t, err)
		r.logits = append([]float32(nil), r.logits...)
		for _, b := range be.ex.bufs {
			if b.kind == plan.State {
				r.cache = append(r.cache, append([]byte(nil), b.b...))
			}
		}
		for _, ps := range be.ex.passes {
			r.runs += len(ps.runs)
		}
		r.touched = be.ex.arenaTouched
		return r
	}
	for _, n := range []int{batch, 257, 40} {
		whole := prefill(1<<20, n) // the same arithmetic (attention's blocks), steps whole
		require.Zero(t, whole.runs)
		for _, chunk := range []int64{64, 128} {
			got := prefill(chunk, n)
			require.NotZero(t, got.runs, "%d rows, chunk %d", n, chunk)
			require.Less(t, got.touched, whole.touched, "chunk %d", chunk)
			for i := range whole.cache {
				require.True(t, bytes.Equal(whole.cache[i], got.cache[i]), "%d rows in chunks of %d: KV cache %d", n, chunk, i)
			}
			require.Zero(t, differing(whole.logits, got.logits), "%d rows in chunks of %d: logits", n, chunk)
		}
	}
}

// tinyLLMOf writes and opens a 2-layer model (products in typ) with SmolLM2's tokenizer
// and vocabulary (random weights, hark bench llm's writer), and n tokens
// spread over the vocabulary.
func tinyLLMOf(t *testing.T, n int, typ ggml.Type) (*gguf.File, []int32) {
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	shape := bench.Shape{Name: "tiny", Stem: "tiny", Layers: 2, Embd: 128, FF: 352, Heads: 4, KVHeads: 2, Vocab: 49152}
	require.NoError(t, bench.WriteFile(path, shape, typ, shared.Path(t, "llm-kit", "tokenizers", "smollm2"), 1))
	f, err := gguf.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	toks := make([]int32, n)
	for i := range toks {
		toks[i] = int32(i*7919) % int32(shape.Vocab)
	}
	return f, toks
}

// differing counts the elements of a and b whose bits differ.
func differing(a, b []float32) int {
	n := 0
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			n++
		}
	}
	return n + len(a) - len(b)
}
