package shaders

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// Repacked q8_0 and q4_0 weights (issue #34). The file's blocks are 34 and
// 18 bytes, so a row is only 2-byte aligned and a mat-vec lane reads its
// 16-element chunk in 2-byte pieces. A host whose Tuning.Repack is
// RepackRows uploads those weights with each row as its k/32 f16 block
// scales, zero-padded to a multiple of 16 bytes, then its quants block
// after block (q8_0: 32 int8; q4_0: 16 bytes of nibbles in the file's
// order): every row starts 16-byte aligned and every chunk's quants are one
// 16-byte load. The kernels reading that layout are the "_rp" instances of
// mat_vec (all four forms), mat_mul (with the native mat_mul_mma) and embed
// (rp_q8_0 and rp_q4_0 in common.metal); RepackedFunction names them.

// RepackRows is the Tuning.Repack value that repacks q8_0/q4_0 weights.
const RepackRows = 2

// Layout is how a weights buffer is uploaded: the zero value is the file's
// layout, else its rows of K elements of Type are repacked.
type Layout struct {
	Type ggml.Type
	K    int
}

// Repacked reports whether l is a repacked layout.
func (l Layout) Repacked() bool { return l.K > 0 }

// repackTypes are the weight types with a repacked layout.
var repackTypes = map[ggml.Type]bool{ggml.Q8_0: true, ggml.Q4_0: true}

// repackKernels are the kernels with "_rp" instances; each reads its
// weights at binding 0, the row width in parameter word kWord.
var repackKernels = map[plan.Kernel]int{
	plan.MatVec: 1, plan.RMSNormMatVec: 1, plan.SiLUMulMatVec: 1, plan.GELUMulMatVec: 1, plan.MatMul: 1,
	plan.Embed: 0, plan.RopeAttentionMatVec: 0, plan.LayerNormMatVec: 1, // (LayerNormMatVec: q8_0 only, its one repacked type)
}

// rpScaleBytes is the padded scale run of a repacked row (rp_scale_bytes).
func rpScaleBytes(k int) int { return (k/32*2 + 15) &^ 15 }

// RepackedRowBytes is the size of one repacked row of k elements of t.
func RepackedRowBytes(t ggml.Type, k int) int {
	if t == ggml.Q4_0 {
		return rpScaleBytes(k) + k/2
	}
	return rpScaleBytes(k) + k
}

// fileRowBytes is the size of one row of k elements of t in the file.
func fileRowBytes(t ggml.Type, k int) int { return k / t.BlockSize() * t.TypeSize() }

// RepackedSize is the size of size bytes of file rows once repacked.
func (l Layout) RepackedSize(size int64) int64 {
	return size / int64(fileRowBytes(l.Type, l.K)) * int64(RepackedRowBytes(l.Type, l.K))
}

// Repack writes src's rows (the file's layout) to a new buffer in the
// repacked layout.
func (l Layout) Repack(src []byte) ([]byte, error) {
	if !repackTypes[l.Type] || l.K <= 0 || l.K%32 != 0 {
		return nil, fmt.Errorf("shaders: no repacked layout for %s rows of %d", l.Type, l.K)
	}
	if len(src)%fileRowBytes(l.Type, l.K) != 0 {
		return nil, fmt.Errorf("shaders: %d bytes are not whole %s rows of %d", len(src), l.Type, l.K)
	}
	return l.convert(src, true), nil
}

// Unpack is Repack's inverse (the tests' reference reader of the layout).
func (l Layout) Unpack(src []byte) []byte { return l.convert(src, false) }

// convert moves src's whole rows from the file's layout to the repacked
// one (pack) or back.
func (l Layout) convert(src []byte, pack bool) []byte {
	srb, drb := fileRowBytes(l.Type, l.K), RepackedRowBytes(l.Type, l.K)
	if !pack {
		srb, drb = drb, srb
	}
	nb, bb := l.K/32, l.Type.TypeSize()
	qb, sb := bb-2, rpScaleBytes(l.K)
	rows := len(src) / srb
	dst := make([]byte, rows*drb)
	part := func(lo, hi int) {
		for r := lo; r < hi; r++ {
			fr, rr := src[r*srb:(r+1)*srb], dst[r*drb:(r+1)*drb] // a file row, a repacked row
			if !pack {
				fr, rr = rr, fr
			}
			for b := 0; b < nb; b++ {
				f, d, q := fr[b*bb:(b+1)*bb], rr[2*b:2*b+2], rr[sb+qb*b:sb+qb*(b+1)]
				if pack {
					copy(d, f[:2])
					copy(q, f[2:])
				} else {
					copy(f[:2], d)
					copy(f[2:], q)
				}
			}
		}
	}
	// A model's upload repacks tens of MB on the host while its load waits
	// (~40 ms for the kit tiny.en on one core): rows split over the cores.
	n := min(runtime.GOMAXPROCS(0), len(dst)/repackSplitBytes)
	if n < 2 {
		part(0, rows)
		return dst
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { part(rows*i/n, rows*(i+1)/n) })
	}
	wg.Wait()
	return dst
}

// repackSplitBytes is the least repacked bytes a core takes.
const repackSplitBytes = 1 << 20

// Layouts returns the layout each of p's buffers is uploaded in under t:
// all file layouts unless t.Repack is RepackRows; then a q8_0 or q4_0
// weights buffer is repacked when every binding of it in p is the weights
// of a kernel with "_rp" instances, of that type, at offset 0 without an
// offset patch, all with one row width that divides the buffer into rows.
// Any other use keeps the file's layout (the kernels then read it as
// before). A host shares an upload only between plans that agree on its
// layout.
func Layouts(p *plan.Plan, t *Tuning) []Layout {
	if t.Repack != RepackRows {
		return nil
	}
	out := make([]Layout, len(p.Buffers))
	bad := make([]bool, len(p.Buffers))
	for _, ps := range p.Passes {
		for i := range ps.Ops {
			d := &ps.Ops[i]
			for s := 0; s < int(d.NBind) && s < len(d.Bind); s++ {
				b := d.Bind[s]
				if b.Buf == plan.NoBuf || int(b.Buf) >= len(p.Buffers) || p.Buffers[b.Buf].Kind != plan.BufWeights {
					continue
				}
				l, ok := rpUse(d, s)
				if !ok || (out[b.Buf].Repacked() && out[b.Buf] != l) {
					bad[b.Buf] = true
					continue
				}
				out[b.Buf] = l
			}
		}
	}
	for i := range out {
		size := p.Buffers[i].Size
		if bad[i] || !out[i].Repacked() || size <= 0 || size%int64(fileRowBytes(out[i].Type, out[i].K)) != 0 {
			out[i] = Layout{}
		}
	}
	return out
}

// weightsSlot is the binding of d's weights: 0, but RopeAttentionMatVec's
// output weights at 5.
func weightsSlot(d *plan.Dispatch) int {
	if d.Kernel == plan.RopeAttentionMatVec {
		return plan.SlotRopeAttentionMatVecW
	}
	return 0
}

// rpUse is the layout binding slot s of d reads its weights in, if it can
// read them repacked.
func rpUse(d *plan.Dispatch, s int) (Layout, bool) {
	kw, ok := repackKernels[d.Kernel]
	ws := weightsSlot(d)
	if !ok || s != ws || !repackTypes[d.Type] || d.Bind[ws].Off != 0 {
		return Layout{}, false
	}
	for _, pt := range d.Patch[:min(int(d.NPatch), len(d.Patch))] {
		if pt.Target == plan.PatchOffset0+plan.PatchTarget(ws) {
			return Layout{}, false
		}
	}
	k := int(d.P[kw])
	if d.Kernel == plan.RopeAttentionMatVec { // square: n = k = nHead·headDim
		a := plan.DecodeRopeAttentionMatVec(d)
		k = a.N()
	}
	if k <= 0 || k%32 != 0 {
		return Layout{}, false
	}
	return Layout{Type: d.Type, K: k}, true
}

// rpNames maps a launch's function to its repacked instance.
var rpNames = map[string]string{}

func init() {
	for _, k := range []plan.Kernel{plan.MatVec, plan.RMSNormMatVec, plan.SiLUMulMatVec, plan.GELUMulMatVec, plan.MatMul, plan.Embed} {
		for t := range repackTypes {
			fn := k.String() + "_" + typeSuffix[t]
			rpNames[fn] = fn + "_rp"
		}
	}
	for _, names := range q8xNames {
		for _, fn := range names {
			rpNames[fn] = fn + "_rp"
		}
	}
	rpNames["layer_norm_mat_vec_q8_0"] = "layer_norm_mat_vec_q8_0_rp" // (q4_0 is not a LayerNormMatVec type)
	for t := range mvRowsTypes {
		for _, b := range []uint32{4, 8} {
			rpNames[mvRowsName(b, t)] = mvRowsName(b, t) + "_rp"
		}
		rpNames[mvRowsMMAName(t)] = mvRowsMMAName(t) + "_rp"
	}
	for t := range repackTypes {
		rpNames[mmaNames[t]] = mmaNames[t] + "_rp"
		rpNames[q8aNames[t]] = q8aNames[t] + "_rp"
		rpNames[mmqNames[t]] = mmqNames[t] + "_rp"
		rpNames["rope_attention_mat_vec_o_"+typeSuffix[t]] = "rope_attention_mat_vec_o_" + typeSuffix[t] + "_rp"
		rpNames["rope_attention_mat_vec_o_"+typeSuffix[t]+"_q8x"] = "rope_attention_mat_vec_o_" + typeSuffix[t] + "_q8x_rp"
	}
}

// quantize_q8a and quantize_q8x's forms read no weights: the same function
// either way.
func init() {
	rpNames["quantize_q8a"] = "quantize_q8a"
	for _, fn := range q8pQuantize {
		rpNames[fn] = fn
	}
	for _, fn := range q8pNames {
		rpNames[fn] = fn + "_rp"
	}
}

// RepackedFunction is the function that runs launch function fn on
// weights in a repacked layout. Every launch of a dispatch whose weights
// Layouts repacked has one.
func RepackedFunction(fn string) (string, error) {
	if rp, ok := rpNames[fn]; ok {
		return rp, nil
	}
	return "", fmt.Errorf("shaders: %s has no instance for repacked weights", fn)
}

// ForLayouts renames ls, the launches of d, to their repacked instances
// when d's weights (binding 0; RopeAttentionMatVec's 5) are in a repacked
// layout of layouts (from Layouts; nil: none are); RopeAttentionMatVec's
// as ramvForLayout says.
func ForLayouts(layouts []Layout, d *plan.Dispatch, ls []Launch) error {
	ws := weightsSlot(d)
	if layouts == nil || int(d.NBind) <= ws {
		return nil
	}
	b := d.Bind[ws].Buf
	if b == plan.NoBuf || int(b) >= len(layouts) || !layouts[b].Repacked() {
		return nil
	}
	for i := range ls {
		if d.Kernel == plan.RopeAttentionMatVec {
			if err := ramvForLayout(&ls[i], d.Type); err != nil {
				return err
			}
			continue
		}
		fn, err := RepackedFunction(ls[i].Function)
		if err != nil {
			return err
		}
		ls[i].Function = fn
	}
	return nil
}
