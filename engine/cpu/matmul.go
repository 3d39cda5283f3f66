package cpu

import (
	"fmt"
	"unsafe"

	"github.com/harkapp/hark/engine/blas"
	"github.com/harkapp/hark/engine/ggml"
)

// MatMul computes out = x·Wᵀ (+ bias) (+ res) for every weight type. It owns
// the scratch (quantized activations, dequantized weight tiles) and the
// task structs, so after the first call of a given size it allocates
// nothing. A MatMul is not safe for concurrent use; make one per executor.
type MatMul struct {
	pool *Pool
	act  []byte    // x rows in the weight type's activation format
	qact spare     // the quantized GEMM's (prefill only: given back after it, arena_release.go)
	tile []float32 // dequantized weight rows for the GEMM path

	args   mulArgs // the current call's operands; a field so tasks don't allocate
	rows   rowTask
	quant  quantTask
	deq    dequantTask
	prep   prepTask
	split  splitTask
	qg     qgemmTask
	qquant qquantTask
	noBLAS bool // tests force the pure-Go path
	qgemm  int  // tests force the quantized GEMM on or off (qgemmAuto)
	// quantRef: Options.QuantGEMM (qgemm is qgemmOn); types whose codes
	// the CPU's SIMD kernel cannot take run the portable one.
	quantRef bool
	// floatActs: quantized weights are dequantized and multiplied by the
	// float activations (Options.FloatActivations).
	floatActs bool

	// async lets the next quantized dot-product call return before its
	// helpers finish (Pool.RunAsync): the executor sets it for a dispatch
	// and fences before anything that reads what the call writes. Such a
	// call keeps its operands and quantized activations in its own ring
	// entry, so the next call may run while it is still in flight.
	async  bool
	flight [flightSize]inFlight
	nextF  int

	// packs are the weights repacked at load (Pack), by first byte.
	packs map[*byte]*packed
	rowb  []byte    // rowScratch
	xsc   []float32 // scaleBuf
}

// inFlight is one asynchronous product's operands and its job.
type inFlight struct {
	args mulArgs
	rows rowTask
	act  []byte
	gen  uint64
}

// flightSize is the products that may be in flight at once (a ring; the
// oldest is waited for before its entry is reused).
const flightSize = 4

// NewMatMul returns a MatMul running on pool.
func NewMatMul(pool *Pool) *MatMul {
	return &MatMul{pool: pool}
}

// gemmMinM is the number of activation rows from which the tiled GEMM path
// beats streaming the weights once per row block with dot products.
const gemmMinM = 16

// tileFloats bounds the dequantized weight tile (4 MiB of float32).
const tileFloats = 1 << 20

// Mul computes, for i < m and j < n,
//
//	out[i*ldo+j] = Σ_kk x[i*ldx+kk]·W[j,kk] (+ bias[j]) (+ res[i*ldr+j])
//
// where W is n rows of k elements of type t in ggml layout. bias and res
// may be nil; res may alias out exactly (same start and ldr == ldo).
// Quantized types quantize x to their activation format and use ggml's
// block dot products.
func (mm *MatMul) Mul(t ggml.Type, w []byte, n, k, m int, x []float32, ldx int,
	out []float32, ldo int, bias, res []float32, ldr int) error {
	kd, ok := kinds[t]
	if !ok {
		return fmt.Errorf("matmul: weight type %s is not supported", t)
	}
	if n < 0 || k < 0 || m < 0 {
		return fmt.Errorf("matmul: negative size n=%d k=%d m=%d", n, k, m)
	}
	if n == 0 || m == 0 {
		return nil
	}
	if k == 0 || k%kd.blockSize != 0 {
		return fmt.Errorf("matmul: k=%d is not a positive multiple of %s's block size %d", k, t, kd.blockSize)
	}
	rb := k / kd.blockSize * kd.typeSize
	if len(w)/rb < n {
		return fmt.Errorf("matmul: %s weights have %d bytes, need %d rows of %d", t, len(w), n, rb)
	}
	if err := checkRows("x", x, m, k, ldx); err != nil {
		return err
	}
	if err := checkRows("out", out, m, n, ldo); err != nil {
		return err
	}
	if bias != nil && len(bias) < n {
		return fmt.Errorf("matmul: bias has %d elements, need %d", len(bias), n)
	}
	if res != nil {
		if err := checkRows("res", res, m, n, ldr); err != nil {
			return err
		}
		if overlaps(res[:(m-1)*ldr+n], out[:(m-1)*ldo+n]) && (&res[0] != &out[0] || ldr != ldo) {
			return fmt.Errorf("matmul: res overlaps out without aliasing it exactly")
		}
	}
	if overlaps(x[:(m-1)*ldx+k], out[:(m-1)*ldo+n]) {
		return fmt.Errorf("matmul: x overlaps out")
	}
	mm.args = mulArgs{kd: kd, w: w[:n*rb], rb: rb, n: n, k: k, m: m, x: x, ldx: ldx,
		out: out, ldo: ldo, bias: bias, res: res, ldr: ldr}
	a := &mm.args
	defer func() { mm.args = mulArgs{} }() // drop references to the caller's slices
	if a.packed = mm.packFor(a); a.packed != nil {
		a.rowb = mm.rowScratch(rb)
	}
	if mm.canQGemm(a) {
		mm.mulQGemm(a)
		return nil
	}
	if m >= gemmMinM && !mm.noBLAS && blas.Available() {
		return mm.mulBLAS(a)
	}
	if mm.async && kd.id == kindQuant && !mm.floatActs { // the float path reads x itself
		mm.mulRowsAsync(a)
		return nil
	}
	mm.mulRows(a)
	return nil
}

// mulArgs is one call's operands, shared by the tasks.
type mulArgs struct {
	kd        *kind
	w         []byte
	rb        int // weight row bytes
	n, k, m   int
	x         []float32
	ldx       int
	out       []float32
	ldo       int
	bias, res []float32
	ldr       int
	act       []byte // quantized x rows, actRB bytes each
	actRB     int
	xp        []byte // with packed and kd.prepPacked: act's rows prepared, xpRB bytes each
	xpRB      int
	packed    *packed // w's interleaved copy for kd.dotPacked, or nil
	rowb      []byte  // with packed: rb bytes per worker for wrow
}

// wrow returns weight row j in ggml layout: from w, or, where w is packed
// (its pages may be gone: Exec.packProducts), unpacked into worker wk's
// scratch.
func (a *mulArgs) wrow(wk, j int) []byte {
	if a.packed == nil {
		return a.w[j*a.rb : (j+1)*a.rb]
	}
	d := a.rowb[wk*a.rb : (wk+1)*a.rb]
	a.packed.row(j, d)
	return d
}

// rowScratch returns rb bytes per worker for wrow.
func (mm *MatMul) rowScratch(rb int) []byte {
	if need := mm.pool.Workers() * rb; len(mm.rowb) < need {
		mm.rowb = make([]byte, need)
	}
	return mm.rowb
}

func checkRows(name string, s []float32, rows, cols, ld int) error {
	if ld < cols {
		return fmt.Errorf("matmul: %s stride %d < row length %d", name, ld, cols)
	}
	if need := (rows-1)*ld + cols; len(s) < need {
		return fmt.Errorf("matmul: %s has %d elements, need %d", name, len(s), need)
	}
	return nil
}

// overlaps reports whether two slices share memory.
func overlaps(a, b []float32) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	a0 := uintptr(unsafe.Pointer(&a[0]))
	b0 := uintptr(unsafe.Pointer(&b[0]))
	return a0 < b0+uintptr(4*len(b)) && b0 < a0+uintptr(4*len(a))
}

// grainFor picks a chunk size giving each worker several chunks to balance
// on, without chunks so small that scheduling dominates.
func grainFor(n, workers, minGrain int) int {
	g := (n + 4*workers - 1) / (4 * workers)
	return max(g, minGrain, 1)
}

// quantizeActs fills *buf (grown as needed) with x's rows in kd's
// activation format.
func (mm *MatMul) quantizeActs(a *mulArgs, buf *[]byte) {
	a.actRB = a.k / a.kd.blockSize * a.kd.actBytes
	need := a.m * a.actRB
	a.xpRB = 0
	if a.packed != nil && a.kd.prepPacked != nil {
		a.xpRB = a.k / a.kd.blockSize * q8PrepBytes
	}
	if cap(*buf) < need+a.m*a.xpRB {
		*buf = make([]byte, need+a.m*a.xpRB)
	}
	a.act = (*buf)[:need]
	a.xp = (*buf)[need : need+a.m*a.xpRB]
	mm.quant.a = a
	mm.pool.Run(a.m, grainFor(a.m, mm.pool.Workers(), max(1, 4096/a.k)), &mm.quant)
	mm.quant.a = nil
}

type quantTask struct{ a *mulArgs }

func (t *quantTask) Do(_, lo, hi int) {
	a := t.a
	for i := lo; i < hi; i++ {
		a.kd.quantize(a.x[i*a.ldx:i*a.ldx+a.k], a.act[i*a.actRB:(i+1)*a.actRB])
		if a.xpRB > 0 {
			a.kd.prepPacked(a.act[i*a.actRB:(i+1)*a.actRB], a.k/a.kd.blockSize, a.xp[i*a.xpRB:(i+1)*a.xpRB])
		}
	}
}

// mulRows is the dot-product path: each weight row is read once and dotted
// with all m activation rows, so it streams W at memory speed for m = 1
// and reuses the quantized activations across rows for small m (beams).
func (mm *MatMul) mulRows(a *mulArgs) {
	mm.rows.a, mm.rows.float = a, mm.floatActs && a.kd.id == kindQuant
	switch {
	case mm.rows.float:
		if need := mm.pool.Workers() * a.k; len(mm.rows.deq) < need {
			mm.rows.deq = make([]float32, need)
		}
	case a.kd.id == kindQuant:
		mm.quantizeActs(a, &mm.act)
	}
	mm.rows.buf, mm.rows.xsc = mm.rowBuf(), mm.scaleBuf(a)
	grain := grainFor(a.n, mm.pool.Workers(), 4)
	if a.packed != nil {
		grain = roundUp(grain, packGroup)
	}
	mm.pool.Run(a.n, grain, &mm.rows)
	mm.rows.a = nil
}

// mulRowsAsync is mulRows for a quantized product that the caller fences:
// the operands and activations move into a ring entry, and the weight rows
// are split into asyncChunks even chunks per worker: each worker starts on
// its own chunk with no shared counter, and the rest are claimed, so a
// worker descheduled or slowed mid-product (a loaded or hybrid machine)
// is helped by the others instead of holding up the next fence.
func (mm *MatMul) mulRowsAsync(a *mulArgs) {
	f := &mm.flight[mm.nextF]
	mm.nextF = (mm.nextF + 1) % flightSize
	mm.pool.WaitGen(f.gen)
	f.args = *a
	mm.quantizeActs(&f.args, &f.act)
	f.rows = rowTask{a: &f.args, buf: mm.rowBuf(), xsc: mm.scaleBuf(a)}
	w := mm.pool.Workers()
	grain := max(4, (a.n+asyncChunks*w-1)/(asyncChunks*w))
	if a.packed != nil {
		grain = roundUp(grain, packGroup)
	}
	f.gen = mm.pool.RunAsync(a.n, grain, &f.rows)
}

// asyncChunks is the chunks per worker of an asynchronous row product (a
// variable for the A/B benchmark).
var asyncChunks = 3

func roundUp(v, m int) int { return (v + m - 1) / m * m }

// rowBuf is rowBufLen result floats per worker; a worker runs its jobs in
// order, so every job may share it.
func (mm *MatMul) rowBuf() []float32 {
	if need := mm.pool.Workers() * rowBufLen; len(mm.rows.buf) < need {
		mm.rows.buf = make([]float32, need)
	}
	return mm.rows.buf
}

type rowTask struct {
	a     *mulArgs
	buf   []float32 // rowBufLen floats per worker for the row-run results
	xsc   []float32 // m·nb·prepN floats per worker: activation preparation (mRows)
	float bool      // quantized weights against float activations
	deq   []float32 // k floats per worker: the dequantized weight row
}

// rowRun bounds a run of weight rows handed to one dotQRows call: small
// enough to stay in L1 while it is reused for every activation row, and to
// keep the per-run results on the stack.
const rowRun = 128

// rowBufLen is a worker's result floats: a run for rowsM activation rows.
const rowBufLen = rowsM * rowRun

func (t *rowTask) Do(w, lo, hi int) {
	a := t.a
	if t.float {
		row := t.deq[w*a.k : (w+1)*a.k]
		for j := lo; j < hi; j++ {
			dequantRow(a.kd, a.wrow(w, j), row)
			for i := 0; i < a.m; i++ {
				d := [1]float32{dotF32(row, a.x[i*a.ldx:i*a.ldx+a.k])}
				a.store(i, j, d[:])
			}
		}
		return
	}
	if a.kd.id == kindQuant {
		nb := a.k / a.kd.blockSize
		// a multiple of 8 from 8 rows on: the VNNI kernels run eight rows at once
		run := min(rowRun, max(4, 32768/a.rb))
		if run > 8 {
			run &^= 7
		}
		buf := t.buf[w*rowBufLen : (w+1)*rowBufLen]
		if a.packed != nil {
			a.packedRows(lo, hi, buf[:max(run, packGroup)])
			return
		}
		if t.xsc != nil {
			per := a.m * nb * a.kd.prepN
			a.mRows(lo, hi, run, buf, t.xsc[w*per:(w+1)*per])
			return
		}
		for j0 := lo; j0 < hi; j0 += run {
			j1 := min(hi, j0+run)
			for i := 0; i < a.m; i++ {
				d := buf[:j1-j0]
				a.kd.dotQRows(a.w[j0*a.rb:j1*a.rb], a.rb, a.act[i*a.actRB:(i+1)*a.actRB], nb, d)
				a.store(i, j0, d)
			}
		}
		return
	}
	if a.m > 1 && a.kd.dotFM != nil {
		a.mRowsF(lo, hi, t.buf[w*rowBufLen:(w+1)*rowBufLen])
		return
	}
	if a.kd.dotFRows != nil && a.packed == nil {
		buf := t.buf[w*rowBufLen : w*rowBufLen+rowRun]
		for j0 := lo; j0 < hi; j0 += rowRun {
			j1 := min(hi, j0+rowRun)
			for i := 0; i < a.m; i++ {
				d := buf[:j1-j0]
				a.kd.dotFRows(a.w[j0*a.rb:j1*a.rb], a.rb, a.x[i*a.ldx:i*a.ldx+a.k], d)
				a.store(i, j0, d)
			}
		}
		return
	}
	for j := lo; j < hi; j++ {
		wr := a.w[j*a.rb : (j+1)*a.rb]
		for i := 0; i < a.m; i++ {
			var d [1]float32
			d[0] = a.kd.dotF(wr, a.x[i*a.ldx:i*a.ldx+a.k])
			a.store(i, j, d[:])
		}
	}
}

// store writes out[i, j0:j0+len(d)] = d (+ bias) (+ res). d is separate
// from out so that res may alias out.
func (a *mulArgs) store(i, j0 int, d []float32) {
	if len(d) == qTileCols && a.bias == nil {
		// the quantized GEMM's full tile rows as fixed-size arrays: no
		// memmove call, no per-element bounds checks (8% of a 2-thread
		// prefill's profile went through the general loops below)
		o, dd := (*[qTileCols]float32)(a.out[i*a.ldo+j0:]), (*[qTileCols]float32)(d)
		if a.res == nil {
			*o = *dd
			return
		}
		r := (*[qTileCols]float32)(a.res[i*a.ldr+j0:])
		for j := range o {
			o[j] = dd[j] + r[j]
		}
		return
	}
	o := a.out[i*a.ldo+j0 : i*a.ldo+j0+len(d)]
	switch {
	case a.bias == nil && a.res == nil:
		copy(o, d)
	case a.res == nil:
		b := a.bias[j0 : j0+len(d)]
		for j := range o {
			o[j] = d[j] + b[j]
		}
	default:
		r := a.res[i*a.ldr+j0 : i*a.ldr+j0+len(d)]
		for j := range o {
			v := d[j]
			if a.bias != nil {
				v += a.bias[j0+j]
			}
			o[j] = v + r[j]
		}
	}
}
