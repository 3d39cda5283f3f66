package shaders

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// rpElement decodes element e of repacked row row (k elements of t) from
// the layout's description alone: the f16 scale of block e/32 at byte
// 2·(e/32), the quants after the scales padded to 16 bytes.
func rpElement(t ggml.Type, row []byte, k, e int) float32 {
	sb := (k/32*2 + 15) / 16 * 16
	d := ggml.FP16ToFP32(binary.LittleEndian.Uint16(row[2*(e/32):]))
	if t == ggml.Q8_0 {
		return float32(int8(row[sb+e])) * d
	}
	b, j := e/32, e%32
	q := row[sb+16*b+j%16]
	if j >= 16 {
		q >>= 4
	}
	return float32(int(q&15)-8) * d
}

// The repacked layout against the file's, decoded independently, at row
// widths whose scale runs need 6, 6, 2 and 14 bytes of padding.
func TestRepackLayout(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, typ := range []ggml.Type{ggml.Q8_0, ggml.Q4_0} {
		for _, k := range []int{32, 160, 224, 576} {
			const n = 7
			w := make([]float32, n*k)
			for i := range w {
				w[i] = float32(r.NormFloat64())
			}
			rb, err := ggml.RowBytes(typ, int64(k))
			require.NoError(t, err)
			q := make([]byte, int(rb)*n)
			require.NoError(t, ggml.Quantize(typ, w, q))
			want := make([]float32, n*k)
			require.NoError(t, ggml.Dequantize(typ, q, want))

			l := Layout{Type: typ, K: k}
			rp, err := l.Repack(q)
			require.NoError(t, err)
			rrb := RepackedRowBytes(typ, k)
			require.Zero(t, rrb%16, "%s k=%d: rows stay 16-byte aligned", typ, k)
			require.Len(t, rp, n*rrb)
			require.Equal(t, int64(len(rp)), l.RepackedSize(int64(len(q))))
			for row := 0; row < n; row++ {
				rr := rp[row*rrb : (row+1)*rrb]
				for p := 2 * k / 32; p < rpScaleBytes(k); p++ {
					require.Zero(t, rr[p], "%s k=%d row %d: padding byte %d", typ, k, row, p)
				}
				for e := 0; e < k; e++ {
					got := rpElement(typ, rr, k, e)
					require.Equal(t, math.Float32bits(want[row*k+e]), math.Float32bits(got), "%s k=%d row %d element %d", typ, k, row, e)
				}
			}
			require.Equal(t, q, l.Unpack(rp), "%s k=%d: Unpack inverts Repack", typ, k)
		}
	}
	_, err := Layout{Type: ggml.Q8_0, K: 64}.Repack(make([]byte, 34*2+1))
	require.Error(t, err, "a partial row")
	_, err = Layout{Type: ggml.Q4_K, K: 256}.Repack(make([]byte, 144))
	require.Error(t, err, "no repacked layout for q4_K")
}

// Layouts repacks a q8_0/q4_0 weights buffer only when every use of it can
// read it repacked.
func TestLayouts(t *testing.T) {
	p := &plan.Plan{Name: "layouts"}
	w := func(name string, size int) plan.BufID {
		return p.AddBuffer(plan.Buffer{Name: name, Kind: plan.BufWeights, Size: int64(size), Data: make([]byte, size)})
	}
	io := p.AddBuffer(plan.Buffer{Name: "io", Kind: plan.IO, Size: 1 << 16})
	x := plan.Binding{Buf: io}
	tied := w("tied", 10*34*2)    // embed and mat_vec, k = 64: repacked
	q4 := w("q4", 3*18*4)         // q4_0 mat_mul, k = 128: repacked
	f16 := w("f16", 4*64*2)       // not a repacked type
	off := w("off", 4*34*2)       // bound at an offset
	kmix := w("kmix", 8*34*2)     // two row widths
	conv := w("conv", 4*34*2)     // conv1d has no repacked instance
	patched := w("patched", 4*34) // its offset is patched per step
	ragged := w("ragged", 3*34+2) // not whole rows
	ps, _ := p.AddPass("run")
	ps.Add(plan.EmbedArgs{Add: plan.None, Type: ggml.Q8_0, Table: plan.Binding{Buf: tied}, Ids: x, Out: x, Dim: 64, N: 1, Ldo: 64}.Dispatch())
	ps.Add(plan.MatVecArgs{Type: ggml.Q8_0, W: plan.Binding{Buf: tied}, X: x, Out: x, Bias: plan.None, Res: plan.None, N: 10, K: 64, M: 1, Ldx: 64, Ldo: 10, Ldr: 10}.Dispatch())
	ps.Add(plan.MatMulArgs{Type: ggml.Q4_0, W: plan.Binding{Buf: q4}, X: x, Out: x, Bias: plan.None, Res: plan.None, N: 3, K: 128, M: 20, Ldx: 128, Ldo: 3, Ldr: 3}.Dispatch())
	ps.Add(plan.MatVecArgs{Type: ggml.F16, W: plan.Binding{Buf: f16}, X: x, Out: x, Bias: plan.None, Res: plan.None, N: 4, K: 64, M: 1, Ldx: 64, Ldo: 4, Ldr: 4}.Dispatch())
	ps.Add(plan.MatVecArgs{Type: ggml.Q8_0, W: plan.Binding{Buf: off, Off: 68}, X: x, Out: x, Bias: plan.None, Res: plan.None, N: 2, K: 64, M: 1, Ldx: 64, Ldo: 2, Ldr: 2}.Dispatch())
	ps.Add(plan.MatVecArgs{Type: ggml.Q8_0, W: plan.Binding{Buf: kmix}, X: x, Out: x, Bias: plan.None, Res: plan.None, N: 8, K: 64, M: 1, Ldx: 64, Ldo: 8, Ldr: 8}.Dispatch())
	ps.Add(plan.MatVecArgs{Type: ggml.Q8_0, W: plan.Binding{Buf: kmix}, X: x, Out: x, Bias: plan.None, Res: plan.None, N: 4, K: 128, M: 1, Ldx: 128, Ldo: 4, Ldr: 4}.Dispatch())
	ps.Add(plan.Conv1DArgs{Type: ggml.Q8_0, W: plan.Binding{Buf: conv}, X: x, Out: x, Bias: plan.None, Cin: 16, Cout: 4, T: 10, Kw: 4, Stride: 1, Ldx: 10, Ldo: 4}.Dispatch())
	d := plan.MatVecArgs{Type: ggml.Q8_0, W: plan.Binding{Buf: patched}, X: x, Out: x, Bias: plan.None, Res: plan.None, N: 2, K: 32, M: 1, Ldx: 32, Ldo: 2, Ldr: 2}.Dispatch()
	d.Patch[0], d.NPatch = plan.Patch{Target: plan.PatchProductWOff, Mul: 34}, 1
	ps.Add(d)
	ps.Add(plan.MatVecArgs{Type: ggml.Q8_0, W: plan.Binding{Buf: ragged}, X: x, Out: x, Bias: plan.None, Res: plan.None, N: 3, K: 32, M: 1, Ldx: 32, Ldo: 3, Ldr: 3}.Dispatch())

	cuda := TuningFor("cuda")
	l := Layouts(p, &cuda)
	require.Len(t, l, len(p.Buffers))
	require.Equal(t, Layout{Type: ggml.Q8_0, K: 64}, l[tied])
	require.Equal(t, Layout{Type: ggml.Q4_0, K: 128}, l[q4])
	for _, b := range []plan.BufID{io, f16, off, kmix, conv, patched, ragged} {
		require.False(t, l[b].Repacked(), p.Buffers[b].Name)
	}
	require.Nil(t, Layouts(p, &Default), "the default tuning keeps the file's layout")
	off1, err := Override(cuda, "Repack=1")
	require.NoError(t, err)
	require.Nil(t, Layouts(p, &off1), "Repack=1 keeps the file's layout")

	var ls []Launch
	for i := range ps.Ops[:3] {
		got, err := LaunchFor(&ps.Ops[i], &cuda, nil)
		require.NoError(t, err)
		require.NoError(t, ForLayouts(l, &ps.Ops[i], got))
		ls = append(ls, got...)
	}
	require.Equal(t, []string{"embed_q8_0_rp", "mat_vec_q8_0_rp", "mat_mul_q4_0_rp"}, []string{ls[0].Function, ls[1].Function, ls[2].Function})
	mma := cuda
	mma.MatMulMMA = MatMulMMARows
	got, err := LaunchFor(&ps.Ops[2], &mma, nil)
	require.NoError(t, err)
	require.NoError(t, ForLayouts(l, &ps.Ops[2], got))
	require.Equal(t, "mat_mul_mma_q4_0_rp", got[0].Function)
}

// A repack large enough to be split over the cores equals its rows
// repacked one at a time (a split's bounds neither drop nor repeat a row).
func TestRepackSplitOverCores(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(5))
	r := rand.New(rand.NewPCG(5, 6))
	for _, typ := range []ggml.Type{ggml.Q8_0, ggml.Q4_0} {
		const k, n = 1536, 3001 // > 5 × repackSplitBytes of q8_0 rows, an odd row count
		q := make([]byte, n*k/32*typ.TypeSize())
		for i := range q {
			q[i] = byte(r.Uint32())
		}
		l := Layout{Type: typ, K: k}
		rp, err := l.Repack(q)
		require.NoError(t, err)
		srb, rrb := len(q)/n, RepackedRowBytes(typ, k)
		for row := 0; row < n; row++ {
			one, err := l.Repack(q[row*srb : (row+1)*srb])
			require.NoError(t, err)
			require.Equal(t, one, rp[row*rrb:(row+1)*rrb], "%s row %d", typ, row)
		}
		require.Equal(t, q, l.Unpack(rp), "%s: Unpack inverts the split Repack", typ)
	}
}
