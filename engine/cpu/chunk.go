package cpu

import (
	"cmp"
	"slices"

	"github.com/harkapp/hark/engine/plan"
)

// Row-chunked runs. A prefill step holds its activations for every token
// of the batch: SmolLM2's 512-row plan has 6.3 MB of gate|up rows and
// 3.1 MB of QKV and attention rows, although each row of a layer's
// blocks only feeds its own row of the next product. Where a pass has a
// run of dispatches that work row by row (norms, matrix products, gated
// activations, adds, RoPE into the cache and causal attention over it),
// with the step's usual patches (rows from VarNTok, positions from
// VarPos, keys from VarKVLen) and no other, and Scratch buffers that live
// only inside the run, the executor runs the run as steps of rowChunk
// rows or fewer: each chunk is a prefill step of its rows at its
// position (VarPos + its first row), the other buffers' row bindings
// moved down to its rows, the inner buffers' left where they are, so the
// inner buffers need rowChunk rows (arena.go places them so). A chunk's
// rows see the keys a whole step's would (causal attention over the
// cache that the earlier chunks wrote), and every kernel computes a row
// from that row alone, so the results are the whole step's bit for bit
// (TestChunkedRunsExact).

// A run's chunk is Options.ChunkRows rows (a multiple of causalBlock, so
// attention's score blocks fall as in the whole step); the last chunk
// takes a remainder under chunkMin rows, so every product and attention
// takes the matrix path the whole step's would (the row kernels'
// rounding differs). 64 rows keep an FFN's gate|up rows narrower than the
// residual stream (SmolLM2: 1.0 MB for 79 rows, where x takes 1.2 MB for
// the step's 512). Off by default: each chunk takes the layer's pool
// barriers again (a pp512 in chunks of 64: 8× the whole step's,
// TestPrefillBarriers), which cost a 2-thread pp512 +36% user CPU in the
// workers' spin; on one thread the chunks cost nothing measurable
// (BENCHMARKS.md, issue #37, branch chunk37).

// chunkRun is a run of a pass's dispatches [first, last] run in chunks;
// inner are the buffers that live inside it.
type chunkRun struct {
	rows        int64 // a chunk's (Options.ChunkRows)
	first, last int
	ops         []plan.Dispatch
	shift       [][]rowBind // per dispatch, the bindings that move with the chunk
	inner       map[plan.BufID]bool
}

// rowBind is a row-indexed binding: its slot and row stride (elements).
type rowBind struct{ slot, ld int }

// stepPatch is a patch a chunkable dispatch must have: target from v.
type stepPatch struct {
	target plan.PatchTarget
	v      plan.Var
}

// rowBindings returns the row-indexed bindings of a dispatch that can run
// in chunks of rows, the patches it must have (the first sets its row
// count), and false for any other.
func rowBindings(d *plan.Dispatch) (rows []rowBind, want []stepPatch, ok bool) {
	ntok := func(t plan.PatchTarget) []stepPatch { return []stepPatch{{t, plan.VarNTok}} }
	switch d.Kernel {
	case plan.MatMul:
		a := plan.DecodeProduct(d)
		return []rowBind{{plan.SlotProductX, a.Ldx}, {plan.SlotProductOut, a.Ldo}, {plan.SlotProductRes, a.Ldr}}, ntok(plan.PatchProductM), true
	case plan.RMSNorm:
		a := plan.DecodeRMSNorm(d)
		if a.Inner > 1 {
			return nil, nil, false // rows of heads inside wider rows
		}
		return []rowBind{{plan.SlotRMSNormX, a.Ldx}, {plan.SlotRMSNormOut, a.Ldo}}, ntok(plan.PatchRMSNormRows), true
	case plan.SiLUMul, plan.GELUMul, plan.Add:
		a := plan.DecodeBinary(d)
		return []rowBind{{plan.SlotBinaryA, a.Lda}, {plan.SlotBinaryB, a.Ldb}, {plan.SlotBinaryOut, a.Ldo}}, ntok(plan.PatchBinaryM), true
	case plan.RopeKV:
		a := plan.DecodeRopeKV(d)
		if a.Flags != 0 {
			return nil, nil, false // rows of many sequences
		}
		return []rowBind{{plan.SlotRopeKVQKV, a.Ldqkv}}, []stepPatch{{plan.PatchRopeKVM, plan.VarNTok}, {plan.PatchRopeKVPos0, plan.VarPos}}, true
	case plan.Attention:
		a := plan.DecodeAttention(d)
		if a.Flags != plan.FlagCausal || present(d, plan.SlotAttentionProbs) {
			return nil, nil, false // a row that sees later keys, or probabilities per step
		}
		return []rowBind{{plan.SlotAttentionQ, a.Ldq}, {plan.SlotAttentionOut, a.Ldo}},
			[]stepPatch{{plan.PatchAttentionM, plan.VarNTok}, {plan.PatchAttentionPos0, plan.VarPos}, {plan.PatchAttentionKVLen, plan.VarKVLen}}, true
	}
	return nil, nil, false
}

// chunkable reports whether d can be part of a chunked run: a row-wise
// kernel planned for more than a chunk's rows with exactly the step
// patches it must have (each the variable itself).
func chunkable(d *plan.Dispatch, chunk int64) bool {
	_, want, ok := rowBindings(d)
	if !ok || int(d.NPatch) != len(want) || int64(d.P[want[0].target-plan.PatchParam0]) <= maxChunkRows(chunk) {
		return false
	}
	for _, p := range d.Patch[:d.NPatch] {
		if p.Mul != 1 || p.Base != 0 || !slices.Contains(want, stepPatch{p.Target, p.Var}) {
			return false
		}
	}
	return true
}

// chunkRuns finds a pass's chunked runs. In each stretch of chunkable
// dispatches, a Scratch buffer is inner when every range of it (u: the
// pass's uses) that meets the stretch lies inside it; the run is the
// stretch cut to its inner buffers' ranges. A stretch without one stays
// whole, as does one that binds a buffer with two row strides (its rows
// would not be the same bytes in every dispatch).
func chunkRuns(ops []plan.Dispatch, u []*use, rowExact func(*plan.Dispatch) bool, chunk int64) []chunkRun {
	var runs []chunkRun
	if chunk <= 0 {
		return nil
	}
	ok := func(k int) bool { return chunkable(&ops[k], chunk) && rowExact(&ops[k]) }
	for i := 0; i < len(ops); {
		if !ok(i) {
			i++
			continue
		}
		j := i
		for j+1 < len(ops) && ok(j+1) {
			j++
		}
		for _, r := range cutRuns(ops, u, i, j) {
			r.rows = chunk
			runs = append(runs, r)
		}
		i = j + 1
	}
	return runs
}

// cutRuns makes the runs of the stretch [i, j] of chunkable dispatches.
func cutRuns(ops []plan.Dispatch, u []*use, i, j int) []chunkRun {
	ld := map[plan.BufID]int{}
	for k := i; k <= j; k++ {
		d := &ops[k]
		rows, _, _ := rowBindings(d)
		for s, bd := range d.Bind[:d.NBind] {
			byRow := slices.ContainsFunc(rows, func(r rowBind) bool { return r.slot == s })
			if b := bd.Buf; b != plan.NoBuf && int(b) < len(u) && u[b] != nil && !byRow {
				return nil // a Scratch buffer read whole, not by rows
			}
		}
		for _, r := range rows {
			if !present(d, r.slot) {
				continue
			}
			b := d.Bind[r.slot].Buf
			if l, seen := ld[b]; seen && l != r.ld {
				return nil
			}
			ld[b] = r.ld
		}
	}
	// the inner buffers' ranges, merged where they meet: each group is a
	// run, so a buffer bound outside the group is not kept across it
	var rs [][2]int
	var owner []plan.BufID
	for b := range ld {
		if int(b) >= len(u) || u[b] == nil {
			continue // not Scratch
		}
		in, met := true, false
		for _, r := range u[b].ranges {
			if r[1] < i || r[0] > j {
				continue
			}
			met = true
			in = in && i <= r[0] && r[1] <= j
		}
		if !met || !in {
			continue
		}
		for _, r := range u[b].ranges {
			if i <= r[0] && r[1] <= j {
				rs, owner = append(rs, r), append(owner, b)
			}
		}
	}
	order := make([]int, len(rs))
	for k := range order {
		order[k] = k
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(rs[a][0], rs[b][0]) })
	var runs []chunkRun
	for _, k := range order {
		if n := len(runs); n > 0 && rs[k][0] <= runs[n-1].last {
			runs[n-1].last = max(runs[n-1].last, rs[k][1])
			runs[n-1].inner[owner[k]] = true
			continue
		}
		runs = append(runs, chunkRun{first: rs[k][0], last: rs[k][1], inner: map[plan.BufID]bool{owner[k]: true}})
	}
	for n := range runs {
		r := &runs[n]
		r.ops = slices.Clone(ops[r.first : r.last+1])
		for k := range r.ops {
			rows, _, _ := rowBindings(&r.ops[k])
			var sh []rowBind
			for _, rb := range rows {
				if present(&r.ops[k], rb.slot) && !r.inner[r.ops[k].Bind[rb.slot].Buf] {
					sh = append(sh, rb)
				}
			}
			r.shift = append(r.shift, sh)
		}
	}
	return runs
}

// chunkMin is the fewest rows of a chunk: the products' and attention's
// matrix paths start there (gemmMinM, gemmAttnMinM); a smaller remainder
// joins the chunk before it.
const chunkMin = gemmMinM

// maxChunkRows is the most rows of a chunk.
func maxChunkRows(chunk int64) int64 { return chunk + chunkMin - 1 }

// nextChunk returns the rows of the chunk from row c0 of a step of rows:
// chunk, or all that are left where fewer than chunkMin would remain.
func nextChunk(c0, rows, chunk int64) int64 {
	n := min(chunk, rows-c0)
	if left := rows - c0 - n; left > 0 && left < chunkMin {
		n += left
	}
	return n
}

// chunkVars are the variables of the chunk of n rows from row c0 of a
// step (vars): a step of its rows at its position, over the whole step's
// keys (the executor reads those past its rows as zeros:
// Exec.keysWritten, so attention's products keep the step's shapes).
func chunkVars(vars *plan.Vars, c0, n int64) plan.Vars {
	v := *vars
	v[plan.VarNTok] = n
	v[plan.VarPos] = vars[plan.VarPos] + c0
	return v
}

// chunk is dispatch k of the run (resolved) for the chunk from row c0.
func (r *chunkRun) chunk(k int, vars *plan.Vars, c0 int64) plan.Dispatch {
	d := r.ops[k].Resolved(vars)
	for _, rb := range r.shift[k] {
		d.Bind[rb.slot].Off += uint64(c0) * 4 * uint64(rb.ld)
	}
	return d
}

// layoutSpans appends the Scratch spans of dispatch k of the run for the
// arena's layout: those of its first chunk, exact for its inner buffers
// (the rows every chunk reuses) and the whole buffer for the others, as
// for any patched dispatch.
func (r *chunkRun) layoutSpans(k int, bufs []plan.Buffer, sizes []uint64, dst []plan.Span) []plan.Span {
	var vars plan.Vars
	vars[plan.VarNTok], vars[plan.VarKVLen] = maxChunkRows(r.rows), maxChunkRows(r.rows)
	d := r.chunk(k-r.first, &vars, 0)
	n := len(dst)
	all := d.Spans(sizes, dst)
	dst = all[:n]
	for _, s := range all[n:] {
		if int(s.Buf) >= len(bufs) || bufs[s.Buf].Kind != plan.Scratch || !(s.Read || s.Write) {
			continue
		}
		if !r.inner[s.Buf] {
			s.Lo, s.Hi, s.Touched = 0, sizes[s.Buf], sizes[s.Buf]
		}
		s.Lo, s.Hi = min(s.Lo, sizes[s.Buf]), min(s.Hi, sizes[s.Buf])
		dst = append(dst, s)
	}
	return dst
}
