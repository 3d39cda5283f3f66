package whisper

import "github.com/harkapp/hark/engine/plan"

// alignWords adds PassAlignWords: word timing on the backend, from what
// PassAlign leaves there (the cross-attention weights of every layer and
// every row's logits), so the host reads a path and the tokens'
// log-probabilities, a few KB, instead of those rows. The alignment heads
// (alignmentHeads: every head of the upper half of the decoder) are those
// of consecutive layers in the alignment buffer, a layer's heads
// [head][tokens][n_audio_ctx].
func (b *builder) alignWords(lay *layout) {
	h := b.h
	ar, nctx, nv := alignRows(h), h.NAudioCtx, h.NVocab
	lay.alignOut = b.p.AddBuffer(plan.Buffer{Name: "align.out", Kind: plan.IO, Size: int64(2*ar) * 4})
	ps, _ := b.p.AddPass("align words")
	sp, err := SpecialsFor(nv)
	if err != nil {
		b.fail("%v", err)
		return
	}
	heads := h.alignmentHeads()
	if len(heads) == 0 {
		return
	}
	if heads[0][1] != 0 {
		b.fail("whisper: alignment heads from head %d of a layer", heads[0][1])
		return
	}
	w := plan.WhisperAlignArgs{W: at(lay.alignment, heads[0][0]*h.NTextHead*ar*nctx), Out: at(lay.alignOut, 0),
		Heads: len(heads), Group: h.NTextHead, GroupStride: h.NTextHead * ar * nctx, Ldw: nctx, Width: medfiltWidth}.Dispatch()
	w.AddPatch(plan.PatchWhisperAlignHeadStride, plan.VarNTok, int64(nctx), 0)
	w.AddPatch(plan.PatchWhisperAlignRows, plan.VarNTok, 1, 0)
	w.AddPatch(plan.PatchWhisperAlignCols, plan.VarUser0, 1, 0)
	w.AddPatch(plan.PatchWhisperAlignFirst, plan.VarUser1, 1, 0)
	ps.Add(w)
	// Row t's log-probability of token t+1 among the text tokens (those
	// before EOT); the host keeps the text rows'.
	lp := plan.TokenLogprobArgs{X: at(lay.alignLog, 0), Ids: at(lay.tokens, 1), Out: at(lay.alignOut, ar),
		N: int(sp.EOT), Ldx: nv}.Dispatch()
	lp.AddPatch(plan.PatchTokenLogprobM, plan.VarNTok, 1, -1)
	ps.Add(lp)
}
