package cpu

import (
	"encoding/binary"
	"math"

	"github.com/harkapp/hark/engine/blas"
	"github.com/harkapp/hark/engine/ggml"
)

// The quantized GEMM multiplies integer weight codes by 8-bit activations
// for matrix-matrix products (prefill, Whisper's encoder), instead of
// dequantizing weight tiles to float32 for sgemm. The micro-kernel computes
// an 8×16 tile (8 activation rows × 16 weight rows): each weight register
// is reused by 8 activation rows and each broadcast activation group by 16
// weight rows, with 8 independent integer accumulator chains.
//
// Weights are repacked, a panel of 16 rows at a time, into a per-worker
// scratch buffer just before use rather than at load: the panel is reused
// by every activation row, so its decode costs a few percent of the panel's
// multiply at prefill sizes (m ≥ 64), the model keeps one copy of its
// weights in ggml's layout (the mat-vec kernels stream that), and nothing
// is added to load time or resident memory.
//
// Panel layout, per 32-element block (qPanelBlock bytes): eight 64-byte
// groups, group g holding bytes 4g..4g+3 of each of the 16 rows' codes
// (row r at 4r: one int32 lane per row, the operand order of VPDPBUSD),
// then the 16 rows' scales as float32. Codes are unsigned: the weight is
// scale·(code − offset) with a per-type offset, so the kernels use the
// unsigned×signed byte product directly and remove offset·Σx exactly in
// int32. Rows past n are zero codes with zero scale.
//
// Activation layout: rows in groups of 8, each group block-major: block b
// of row i is 40 bytes at (b·8 + i)·40: 32 int8 codes, float32 scale d_x,
// int32 −offset·Σcodes. Rows past m are zero.
const (
	qTileRows   = 8  // activation rows per micro-kernel tile
	qTileCols   = 16 // weight rows per panel
	qPanelBlock = 32*qTileCols + 4*qTileCols
	qActBlock   = 40
)

// qgemmMinM is the number of activation rows from which the quantized GEMM
// beats the row-run dot products (mulRows).
const qgemmMinM = gemmMinM

// panelDecoder decodes one weight block of type t into 32 unsigned codes;
// offset is the code of a zero weight.
type panelDecoder struct {
	t       ggml.Type
	offset  int32
	maxCode int
}

var panelDecoders = map[ggml.Type]*panelDecoder{
	ggml.Q8_0:   {ggml.Q8_0, 128, 255},
	ggml.Q4_0:   {ggml.Q4_0, 8, 15},
	ggml.Q5_0:   {ggml.Q5_0, 16, 31},
	ggml.IQ4_NL: {ggml.IQ4_NL, 128, 255},
}

// decode returns the block's scale. A switch rather than a func value
// keeps q on the caller's stack.
func (d *panelDecoder) decode(blk []byte, q *[32]byte) float32 {
	switch d.t {
	case ggml.Q8_0:
		return decodeQ8_0(blk, q)
	case ggml.Q4_0:
		return decodeQ4_0(blk, q)
	case ggml.Q5_0:
		return decodeQ5_0(blk, q)
	default:
		return decodeIQ4NL(blk, q)
	}
}

func halfAt(b []byte) float32 { return f16Table[binary.LittleEndian.Uint16(b)] }

func decodeQ8_0(blk []byte, q *[32]byte) float32 {
	for g := 0; g < 4; g++ {
		v := binary.LittleEndian.Uint64(blk[2+8*g:])
		binary.LittleEndian.PutUint64(q[8*g:], v^0x8080808080808080) // int8 + 128
	}
	return halfAt(blk)
}

func decodeQ4_0(blk []byte, q *[32]byte) float32 {
	for g := 0; g < 2; g++ {
		v := binary.LittleEndian.Uint64(blk[2+8*g:])
		binary.LittleEndian.PutUint64(q[8*g:], v&0x0F0F0F0F0F0F0F0F)
		binary.LittleEndian.PutUint64(q[16+8*g:], v>>4&0x0F0F0F0F0F0F0F0F)
	}
	return halfAt(blk)
}

func decodeQ5_0(blk []byte, q *[32]byte) float32 {
	qh := binary.LittleEndian.Uint32(blk[2:])
	for j := 0; j < 16; j++ {
		b := blk[6+j]
		q[j] = b&0x0F | byte(qh>>j&1)<<4
		q[j+16] = b>>4 | byte(qh>>(j+16)&1)<<4
	}
	return halfAt(blk)
}

func decodeIQ4NL(blk []byte, q *[32]byte) float32 {
	for j := 0; j < 16; j++ {
		b := blk[2+j]
		q[j] = byte(ggml.KValuesIQ4NL[b&0x0F]) ^ 0x80
		q[j+16] = byte(ggml.KValuesIQ4NL[b>>4]) ^ 0x80
	}
	return halfAt(blk)
}

// packPanel writes weight rows [j0, j0+16) into panel (nb·qPanelBlock
// bytes) as worker wk; rows at or past a.n are zero.
func packPanel(a *mulArgs, dec *panelDecoder, wk, j0 int, panel []byte) {
	nb := a.k / 32
	panel = panel[:nb*qPanelBlock]
	var q [32]byte
	for r := 0; r < qTileCols; r++ {
		j := j0 + r
		if j >= a.n {
			for b := 0; b < nb; b++ {
				p := panel[b*qPanelBlock:]
				for g := 0; g < 8; g++ {
					binary.LittleEndian.PutUint32(p[g*64+4*r:], 0)
				}
				binary.LittleEndian.PutUint32(p[512+4*r:], 0)
			}
			continue
		}
		wr := a.wrow(wk, j)
		for b := 0; b < nb; b++ {
			s := dec.decode(wr[b*a.kd.typeSize:], &q)
			p := panel[b*qPanelBlock:]
			for g := 0; g < 8; g++ {
				binary.LittleEndian.PutUint32(p[g*64+4*r:], binary.LittleEndian.Uint32(q[4*g:]))
			}
			binary.LittleEndian.PutUint32(p[512+4*r:], math.Float32bits(s))
		}
	}
}

// quantizeRowQ writes row x (k elements) as activation row i of act:
// per block d = max|x|/127 and codes round(x/d). Unlike the row products'
// activations (byte-exact with ggml's from_float), d stays float32 rather
// than f16, so prefill logits differ from ggml's and from the decode path
// by that rounding; the float64-reference tests bound the result. Bit tricks instead of
// math.Abs and math.Round: this runs over every element of x and was a
// third of the product's time with the float64 library calls.
func quantizeRowQ(x []float32, i, nb int, offset int32, act []byte) {
	base := (i / qTileRows) * nb * qTileRows * qActBlock
	for b := 0; b < nb; b++ {
		blk := act[base+(b*qTileRows+i%qTileRows)*qActBlock:][:qActBlock]
		xb := x[b*32 : b*32+32]
		var amaxBits uint32 // |x| as bits: non-negative floats order as integers
		for _, v := range xb {
			amaxBits = max(amaxBits, math.Float32bits(v)&0x7FFFFFFF)
		}
		d := math.Float32frombits(amaxBits) / 127
		var id float32
		if d != 0 {
			id = 1 / d
		}
		var sum int32
		for e, v := range xb {
			// Adding 1.5·2^23 rounds |v·id| ≤ 127 to an integer in the
			// low mantissa bits (ties to even).
			c := int32(math.Float32bits(v*id+roundMagic)&0x7FFFFF) - 0x400000
			blk[e] = byte(c)
			sum += c
		}
		binary.LittleEndian.PutUint32(blk[32:], math.Float32bits(d))
		binary.LittleEndian.PutUint32(blk[36:], uint32(-offset*sum))
	}
}

const roundMagic = 12582912 // 1.5·2^23

// qquantRow is the activation quantizer, replaced by a SIMD one at init
// where the CPU has it.
var qquantRow = quantizeRowQ

// qgemmTileFunc computes one 8×16 tile: out[i·16+r] = Σ_b scale_r·d_x·
// (Σ code·x − offset·Σx) over nb blocks.
type qgemmTileFunc = func(panel, act []byte, nb int, out *[qTileRows * qTileCols]float32)

// qgemmKernel is the tile kernel. The SIMD kernel replaces it at init
// where the CPU has one.
var qgemmKernel qgemmTileFunc = qgemmGeneric

// qgemmRunFunc computes tiles consecutive activation groups' tiles
// against one panel: act holds tiles·nb blocks, out tiles·128 floats.
type qgemmRunFunc = func(panel, act []byte, nb, tiles int, out []float32)

// qgemmRunTiles bounds a run: a worker's result scratch is this many tiles.
const qgemmRunTiles = 8

// qgemmAccel, where set, returns a run kernel to use instead of
// qgemmKernel for a product on workers threads, or nil: the AMX one, which
// can only be chosen once a child process has run it (on the first
// quantized GEMM, not at init), and which loads its tile configuration
// once per run.
var qgemmAccel func(workers int) qgemmRunFunc

// qgemmMaxCode is the largest weight code the SIMD qgemmKernel takes (0:
// there is none; the portable kernel is slower than sgemm and serves
// tests only). The AVX2 kernel's int16 pair sums limit it to 5-bit codes.
var qgemmMaxCode = 0

// qgemmOverBLAS is whether the SIMD kernel is preferred to sgemm on
// dequantized tiles where a BLAS is loaded: measured for VNNI (several
// times faster, engine/cpu BenchmarkQGemmAB); the AVX2 kernel was not
// measured against a BLAS tuned for its CPU, so it only replaces the
// pure-Go paths.
var qgemmOverBLAS = false

func qgemmGeneric(panel, act []byte, nb int, out *[qTileRows * qTileCols]float32) {
	*out = [qTileRows * qTileCols]float32{}
	for b := 0; b < nb; b++ {
		p := panel[b*qPanelBlock:][:qPanelBlock]
		xs := act[b*qTileRows*qActBlock:][:qTileRows*qActBlock]
		for i := 0; i < qTileRows; i++ {
			x := xs[i*qActBlock:][:qActBlock]
			dx := math.Float32frombits(binary.LittleEndian.Uint32(x[32:]))
			corr := int32(binary.LittleEndian.Uint32(x[36:]))
			for r := 0; r < qTileCols; r++ {
				acc := corr
				for g := 0; g < 8; g++ {
					for t := 0; t < 4; t++ {
						acc += int32(p[g*64+4*r+t]) * int32(int8(x[4*g+t]))
					}
				}
				s := math.Float32frombits(binary.LittleEndian.Uint32(p[512+4*r:]))
				out[i*qTileCols+r] += float32(acc) * (s * dx)
			}
		}
	}
}

// canQGemm reports whether Mul should take the quantized GEMM for a.
func (mm *MatMul) canQGemm(a *mulArgs) bool {
	// Float activations are the GPU-equality reference: never 8-bit ones.
	if mm.floatActs || a.m < qgemmMinM || a.k%32 != 0 || panelDecoders[a.kd.t] == nil {
		return false
	}
	if mm.qgemm != qgemmAuto {
		return mm.qgemm == qgemmOn
	}
	if !qgemmOverBLAS && !mm.noBLAS && blas.Available() {
		return false
	}
	return panelDecoders[a.kd.t].maxCode <= qgemmMaxCode
}

// Test overrides of the path choice.
const (
	qgemmAuto = iota
	qgemmOn
	qgemmOff
)

// mulQGemm quantizes x into the tile layout and runs the panels on the
// pool. The 8×16 tiles, panel-major, are cut into 4 contiguous equal
// ranges per worker: every worker gets work even when there are fewer
// panels than workers (SmolLM2's K/V projections have 12), each starts
// on its own range without touching the pool's shared counter, and the
// spare ranges balance a worker that was descheduled. A worker repacks a
// panel only when its range enters it.
func (mm *MatMul) mulQGemm(a *mulArgs) {
	dec := panelDecoders[a.kd.t]
	nb := a.k / 32
	groups := (a.m + qTileRows - 1) / qTileRows
	need := groups * nb * qTileRows * qActBlock
	mm.qact.grow(need)
	act := mm.qact.b[:need]
	// Padding rows of the last group must be zero (d_x = 0, correction 0).
	if pad := a.m % qTileRows; pad != 0 {
		last := act[(groups-1)*nb*qTileRows*qActBlock:]
		for b := 0; b < nb; b++ {
			clear(last[(b*qTileRows+pad)*qActBlock : (b+1)*qTileRows*qActBlock])
		}
	}
	t := &mm.qg
	t.a, t.dec, t.act, t.nb, t.groups = a, dec, act, nb, groups
	workers := mm.pool.Workers()
	t.kern, t.run = qgemmKernel, nil
	switch {
	case mm.quantRef && dec.maxCode > qgemmMaxCode: // Options.QuantGEMM on codes the kernels do not take
		t.kern = qgemmGeneric
	case qgemmAccel != nil:
		t.run = qgemmAccel(workers)
	}
	mm.qquant.t = t
	mm.pool.Run(a.m, grainFor(a.m, workers, max(1, 4096/a.k)), &mm.qquant)
	mm.qquant.t = nil
	panels := (a.n + qTileCols - 1) / qTileCols
	t.tiles = panels * groups
	if need := workers * nb * qPanelBlock; len(t.panels) < need {
		t.panels = make([]byte, need)
	}
	if len(t.last) < workers {
		t.last = make([]int, workers)
		t.outs = make([]float32, workers*qgemmRunTiles*qTileRows*qTileCols)
	}
	for w := range t.last[:workers] {
		t.last[w] = -1
	}
	t.items = min(t.tiles, 4*workers)
	mm.pool.Run(t.items, 1, t)
	t.a, t.dec, t.act = nil, nil, nil
}

// qquantTask quantizes activation rows into the tile layout.
type qquantTask struct{ t *qgemmTask }

func (q *qquantTask) Do(_, lo, hi int) {
	t := q.t
	a := t.a
	for i := lo; i < hi; i++ {
		qquantRow(a.x[i*a.ldx:i*a.ldx+a.k], i, t.nb, t.dec.offset, t.act)
	}
}

type qgemmTask struct {
	a      *mulArgs
	dec    *panelDecoder
	kern   qgemmTileFunc
	run    qgemmRunFunc // in kern's place where set
	act    []byte
	nb     int
	groups int
	tiles  int    // panels × groups
	items  int    // ranges of tiles
	panels []byte // one panel of scratch per worker
	last   []int  // the panel each worker's scratch holds, -1 for none
	// outs is each worker's result tile: a stack array would escape
	// through the kernel's func value.
	outs []float32
}

func (t *qgemmTask) Do(w, lo, hi int) {
	a := t.a
	pb := t.nb * qPanelBlock
	panel := t.panels[w*pb : (w+1)*pb]
	gb := t.nb * qTileRows * qActBlock
	const tsz = qTileRows * qTileCols
	outs := t.outs[w*qgemmRunTiles*tsz : (w+1)*qgemmRunTiles*tsz]
	for it := lo; it < hi; it++ {
		end := (it + 1) * t.tiles / t.items
		for tile := it * t.tiles / t.items; tile < end; {
			p, g := tile/t.groups, tile%t.groups
			if t.last[w] != p {
				if j0 := p * qTileCols; panelFromPack(a, j0) {
					packPanelQ8Packed(a.packed, j0, panel)
				} else {
					packPanel(a, t.dec, w, j0, panel)
				}
				t.last[w] = p
			}
			n := 1
			if t.run != nil { // this panel's groups in the range, a run at a time
				n = min(end-tile, t.groups-g, qgemmRunTiles)
				t.run(panel, t.act[g*gb:(g+n)*gb], t.nb, n, outs)
			} else {
				t.kern(panel, t.act[g*gb:(g+1)*gb], t.nb, (*[tsz]float32)(outs))
			}
			j0 := p * qTileCols
			cols := min(qTileCols, a.n-j0)
			for i := 0; i < n*qTileRows && g*qTileRows+i < a.m; i++ {
				a.store(g*qTileRows+i, j0, outs[i*qTileCols:i*qTileCols+cols])
			}
			tile += n
		}
	}
}
