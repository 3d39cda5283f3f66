package cpu

import (
	"bytes"
	"testing"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/llm"
	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/shared"
	"github.com/stretchr/testify/require"
)

// An executor that gives its prefill's scratch back when the next pass
// runs (arena_release.go) computes what one that keeps it computes, bit
// for bit, whole steps or in chunks of rows: prefill, decode, a second
// prefill over the pages given back, decode (the logits of each and the
// KV cache at the end); the pages stay through the prefill and are out
// of memory after the decode that follows it; back-to-back prefills give
// nothing back; a decode step allocates nothing, and a prefill over
// given-back pages no more than one over kept pages.
func TestDroppedScratchExact(t *testing.T) {
	const batch, first, second = 300, 300, 200
	f, toks := tinyLLMOf(t, first+1+second, ggml.Q8_0)
	defer func(v int64) { dropMin = v }(dropMin)
	dropMin = 1 // the tiny model's prefill alone touches 0.76 MB (24 KB in chunks of 64)
	type result struct {
		logits [][]float32
		cache  [][]byte
	}
	run := func(drop bool, chunk int) (result, *Exec) {
		be := &recordingBackend{Backend: New(Options{Threads: 2, ChunkRows: chunk})}
		t.Cleanup(be.Close)
		m, err := llm.Load(be, f, llm.Options{Context: 512, Batch: batch})
		require.NoError(t, err)
		t.Cleanup(func() { m.Close() })
		ex := be.ex
		require.NotNil(t, ex.drops[llm.PassPrefill], "the prefill gives pages back")
		require.Nil(t, ex.drops[llm.PassDecode], "decode gives nothing back")
		if !drop {
			ex.drops = nil // an executor that keeps them
		}
		var r result
		keep := func(l []float32, err error) {
			require.NoError(t, err)
			r.logits = append(r.logits, append([]float32(nil), l...))
		}
		afterPrefill := func() {
			if drop {
				require.Equal(t, llm.PassPrefill, ex.pending, "given back when another pass runs")
			}
		}
		afterDecode := func() {
			if !drop {
				return
			}
			require.Equal(t, -1, ex.pending)
			var kept int64
			for _, d := range ex.drops[llm.PassPrefill] {
				kept += d[1] - d[0]
			}
			kept = int64(len(ex.arena.b)) - kept
			require.LessOrEqual(t, int64(resident(ex.arena.b)), kept, "the arena's prefill pages given back")
			require.Zero(t, resident(ex.attn.b), "attention's scratch given back")
			require.Zero(t, resident(ex.mm.qact.b), "the GEMM's activations given back")
		}
		keep(m.Prefill(toks[:first]))
		afterPrefill()
		keep(m.Decode(toks[first]))
		afterDecode()
		keep(m.Prefill(toks[first+1 : first+1+second]))
		afterPrefill()
		keep(m.Decode(toks[0]))
		afterDecode()
		for _, b := range ex.bufs {
			if b.kind == plan.State {
				r.cache = append(r.cache, append([]byte(nil), b.b...))
			}
		}
		return r, ex
	}
	var ex, keptEx *Exec
	for _, chunk := range []int{64, 0} { // Options.ChunkRows too; the default last
		var kept, got result
		kept, keptEx = run(false, chunk)
		got, ex = run(true, chunk)
		require.Equal(t, 2, ex.nDrops, "two prefills gave their pages back")
		n := int64(0)
		for _, d := range ex.drops[llm.PassPrefill] {
			n += d[1] - d[0]
		}
		t.Logf("chunks of %d: the prefill gives back %d of the arena's %d bytes", chunk, n, len(ex.arena.b))
		require.Len(t, got.logits, len(kept.logits))
		for i := range kept.logits {
			require.Zero(t, differing(kept.logits[i], got.logits[i]), "chunks of %d: logits %d", chunk, i)
		}
		for i := range kept.cache {
			require.True(t, bytes.Equal(kept.cache[i], got.cache[i]), "chunks of %d: KV cache %d", chunk, i)
		}
	}

	pos := int64(first + 1 + second + 1)
	decode := func() {
		v := plan.Vars{plan.VarPos: pos, plan.VarNTok: 1, plan.VarKVLen: pos + 1}
		require.NoError(t, ex.Run(llm.PassDecode, &v))
		pos++
	}
	require.Zero(t, testing.AllocsPerRun(4, decode), "a decode step")
	prefill := func(ex *Exec) func() {
		return func() {
			v := plan.Vars{plan.VarPos: 0, plan.VarNTok: batch, plan.VarKVLen: batch}
			require.NoError(t, ex.Run(llm.PassPrefill, &v))
		}
	}
	drops := ex.nDrops
	prefill(ex)()
	prefill(ex)()
	require.Equal(t, drops, ex.nDrops, "back-to-back prefills give nothing back")
	decode() // gives them back
	require.Equal(t, drops+1, ex.nDrops)
	// each prefill after the decode that gave its pages back, against the
	// same on the executor that keeps them
	cycle := func(ex *Exec) func() {
		return func() {
			prefill(ex)()
			v := plan.Vars{plan.VarPos: batch, plan.VarNTok: 1, plan.VarKVLen: batch + 1}
			require.NoError(t, ex.Run(llm.PassDecode, &v))
		}
	}
	require.LessOrEqual(t, testing.AllocsPerRun(2, cycle(ex)), testing.AllocsPerRun(2, cycle(keptEx)),
		"a prefill over given-back pages allocates no more than one over kept pages (the heap's, not the pages)")
	require.Equal(t, drops+4, ex.nDrops)
	pos = batch + 1 // after the last cycle's prefill and decode
	require.Zero(t, testing.AllocsPerRun(4, decode), "a decode step after it")
}

// TestRecurringPassKeepsPages loads the kit tiny.en q8_0 Whisper model,
// whose encode pass the plan marks Recurring: that pass gives nothing back
// (the decoder's passes still may), so the pages an encoder window touched
// are all resident after the decoder's prompt that follows it. Before, the
// prompt gave them back and the next window faulted them in again.
func TestRecurringPassKeepsPages(t *testing.T) {
	f, err := whisper.OpenFile(shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-q8_0.bin"))
	require.NoError(t, err)
	defer f.Close()
	be := &recordingBackend{Backend: New(Options{Threads: 2})}
	defer be.Close()
	m, err := f.Load(be, whisper.Options{})
	require.NoError(t, err)
	defer m.Close()
	ex := be.ex
	require.Nil(t, ex.drops[whisper.PassEncode], "the encode pass gives nothing back") // 16.6 MB before
	mel := make([]float32, m.H.NMels*m.H.NFrames())
	for i := range mel {
		mel[i] = float32(i%89)/89 - 0.5
	}
	sp, err := whisper.SpecialsFor(m.H.NVocab)
	require.NoError(t, err)
	sot := []int32{sp.SOT}
	for w := range 2 {
		require.NoError(t, m.Encode(mel))
		enc := resident(ex.arena.b)
		_, err = m.Prompt(sot, 0)
		require.NoError(t, err)
		after := resident(ex.arena.b)
		t.Logf("window %d: %d arena bytes resident after the encoder, %d after the prompt", w, enc, after)
		require.GreaterOrEqual(t, after, enc, "window %d: the encoder's pages stay through the prompt", w)
	}
}
