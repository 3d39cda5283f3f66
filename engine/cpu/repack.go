package cpu

import (
	"encoding/binary"
	"math"
	"unsafe"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// Interleaved weights for the row products. The VNNI row kernels compute
// eight weight rows at a time; reading them from the ggml layout costs
// eight scattered 16-byte loads and eight scalar scale loads per block. At
// load the executor repacks each Q8_0/Q4_0/Q5_0 product weight whose
// kernel reads packs (kind.dotPacked) into groups of eight rows, block by
// block: the eight f16 scales, for Q5_0 the four 64-bit byte masks of the
// fifth bits (the low, then high 16 qh bits of rows 0-3, then of rows
// 4-7, row r%4 at bits 16·(r%4)), then the 64-byte register images the
// kernel needs (Q8_0 codes biased to unsigned). The copy has the
// original's size; rows past the last full group stay in ggml layout
// after the groups.
//
// The pack replaces the original: every reader of a packed matrix (the
// row kernels, the quantized GEMM's panels, sgemm's tiles, the embedding
// lookup of a tied output matrix) reads the pack, and once the executor
// has packed its products it releases the original's pages where they
// are a read-only file mapping (releasePages), so the model's resident
// memory stays one copy of its weights. Nothing is lost: a read of the
// original faults the file's page in again.

// packGroup is the rows a packed group interleaves.
const packGroup = 8

// packed is one weight matrix repacked for kind.dotPacked.
type packed struct {
	t    ggml.Type
	n, k int
	b    []byte // n/8 groups of nb packed blocks, then the n%8 tail rows
}

// bias8 adds 128 to eight signed codes (XOR 0x80 each).
const bias8 = 0x8080808080808080

// flip16 writes 16 codes of src to dst with their sign bits flipped: it
// biases signed codes to unsigned and back.
func flip16(dst, src []byte) {
	binary.LittleEndian.PutUint64(dst, binary.LittleEndian.Uint64(src)^bias8)
	binary.LittleEndian.PutUint64(dst[8:], binary.LittleEndian.Uint64(src[8:])^bias8)
}

// packable reports whether t has a packed layout (whether or not this CPU
// runs a kernel on it).
func packable(t ggml.Type) bool { return t == ggml.Q8_0 || t == ggml.Q4_0 || t == ggml.Q5_0 }

// packWeights repacks n rows of k elements of type t (packable) from w
// into heap memory, the groups split over pool's workers (nil: the
// caller alone).
func packWeights(pool *Pool, t ggml.Type, w []byte, n, k int) *packed {
	return packInto(pool, t, w, n, k, alignedBytes(int64(n*(k/32*kinds[t].typeSize))))
}

// packInto is packWeights into dst (n·k/32 blocks).
func packInto(pool *Pool, t ggml.Type, w []byte, n, k int, dst []byte) *packed {
	rb := k / 32 * kinds[t].typeSize
	p := &packed{t: t, n: n, k: k, b: dst[:n*rb]}
	g8 := n / packGroup
	pt := packTask{t: t, w: w, dst: p.b, rb: rb}
	if pool == nil {
		pt.Do(0, 0, g8)
	} else {
		pool.Run(g8, max(1, (1<<18)/(packGroup*rb)), &pt) // chunks of about 256 KiB
	}
	copy(p.b[g8*packGroup*rb:], w[g8*packGroup*rb:n*rb])
	return p
}

// packTask packs groups [lo, hi) of w (rows rb bytes) into dst.
type packTask struct {
	t      ggml.Type
	w, dst []byte
	rb     int
}

func (pt *packTask) Do(_, lo, hi int) {
	ts := kinds[pt.t].typeSize
	rb, nb := pt.rb, pt.rb/ts
	for g := lo; g < hi; g++ {
		dst := pt.dst[g*packGroup*rb : (g+1)*packGroup*rb]
		for b := range nb {
			blk := dst[b*packGroup*ts : (b+1)*packGroup*ts]
			for r := range packGroup {
				src := pt.w[(g*packGroup+r)*rb+b*ts : (g*packGroup+r)*rb+(b+1)*ts]
				copy(blk[2*r:2*r+2], src[:2]) // the f16 scale
				switch pt.t {
				case ggml.Q8_0:
					for h := range 2 { // codes 0-15, then 16-31, biased to unsigned
						flip16(blk[16+h*128+r*16:16+h*128+r*16+16], src[2+16*h:18+16*h])
					}
				case ggml.Q5_0:
					m := 16 + r/4*16 + r%4*2
					copy(blk[m:m+2], src[2:4])    // qh bits 0-15: the low nibbles'
					copy(blk[m+8:m+10], src[4:6]) // qh bits 16-31: the high nibbles'
					copy(blk[48+r*16:48+r*16+16], src[6:22])
				default:
					copy(blk[16+r*16:16+r*16+16], src[2:18])
				}
			}
		}
	}
}

// unpackBlock is packTask's inverse for one block: it writes row r's
// block of a packed group's interleaved block blk (packGroup blocks of
// type t) to dst in ggml layout.
func unpackBlock(t ggml.Type, blk []byte, r int, dst []byte) {
	copy(dst[:2], blk[2*r:2*r+2])
	switch t {
	case ggml.Q8_0:
		for h := range 2 {
			flip16(dst[2+16*h:18+16*h], blk[16+h*128+r*16:16+h*128+r*16+16])
		}
	case ggml.Q5_0:
		m := 16 + r/4*16 + r%4*2
		copy(dst[2:4], blk[m:m+2])
		copy(dst[4:6], blk[m+8:m+10])
		copy(dst[6:22], blk[48+r*16:48+r*16+16])
	default:
		copy(dst[2:18], blk[16+r*16:16+r*16+16])
	}
}

// row writes weight row j in ggml layout to dst (k/32 blocks): the
// readers of the original layout (the quantized GEMM's panels, sgemm's
// tiles, embedding rows) read the pack through it, so the original is
// not needed once packed.
func (p *packed) row(j int, dst []byte) {
	ts := kinds[p.t].typeSize
	nb := p.k / 32
	rb := nb * ts
	dst = dst[:rb]
	if n8 := p.n / packGroup * packGroup; j >= n8 {
		copy(dst, p.b[j*rb:(j+1)*rb]) // the tail rows keep ggml's layout
		return
	}
	g := p.b[j/packGroup*packGroup*rb : (j/packGroup+1)*packGroup*rb]
	for b := range nb {
		unpackBlock(p.t, g[b*packGroup*ts:(b+1)*packGroup*ts], j%packGroup, dst[b*ts:(b+1)*ts])
	}
}

// Pack repacks weight matrices for the row products of this CPU's kernels,
// keyed by their first byte: Mul takes a pack when it is called on exactly
// that matrix (same start, type and shape) with fewer than gemmMinM rows
// and the kernel installed. It returns the bytes added (0 when the type
// has no packed kernel here, or the matrix is packed already).
func (mm *MatMul) Pack(t ggml.Type, w []byte, n, k int) int {
	kd := kinds[t]
	if kd == nil || kd.dotPacked == nil || !packable(t) || n < packGroup || k <= 0 || k%32 != 0 || len(w) < n*(k/32)*kd.typeSize {
		return 0
	}
	key := unsafe.SliceData(w)
	if p := mm.packs[key]; p != nil && p.t == t && p.n == n && p.k == k {
		return 0
	}
	if mm.packs == nil {
		mm.packs = map[*byte]*packed{}
	}
	p := packInto(mm.pool, t, w, n, k, packAlloc(int64(n*(k/32)*kd.typeSize)))
	mm.packs[key] = p
	return len(p.b)
}

// freePacks releases the packs (Exec.Close, after every product
// finished).
func (mm *MatMul) freePacks() {
	for _, p := range mm.packs {
		packFree(p.b)
	}
	mm.packs = nil
}

// packBudget bounds the bytes one executor packs: where the original is
// not a file mapping (a plan built from slices) it stays resident beside
// the pack; past the budget, matrices keep the unpacked kernels (a
// variable for tests).
var packBudget = 1 << 30

// packProducts packs, at load and in plan order, the weights of every
// product dispatch that takes the row path (fewer than gemmMinM rows as
// planned: decode steps, beams) where this CPU has a packed kernel, each
// matrix once, up to packBudget bytes, releasing each original's pages
// once it is packed: the load holds one matrix twice at a time, not the
// model (SmolLM2's q8_0: a peak RSS of about one copy of its weights,
// where releasing them all at the end held both copies at once).
func (e *Exec) packProducts() {
	if e.mm.floatActs {
		return
	}
	for _, ps := range e.passes {
		for i := range ps.ops {
			d, ok := productOf(&ps.ops[i])
			if !ok {
				continue
			}
			if !packable(d.Type) || kinds[d.Type].dotPacked == nil {
				continue
			}
			p := plan.DecodeProduct(&d)
			b, off, ok := e.bind(&d, 0)
			if !ok || b.kind != plan.BufWeights || p.M <= 0 || p.M >= gemmMinM || p.N <= 0 || p.K <= 0 || p.K%32 != 0 {
				continue
			}
			need := uint64(p.N) * uint64(p.K/32*kinds[d.Type].typeSize)
			if off > uint64(len(b.b)) || need > uint64(len(b.b))-off {
				continue // Run reports the overrun
			}
			if uint64(e.packed)+need > uint64(packBudget) {
				continue
			}
			if n := e.mm.Pack(d.Type, b.b[off:off+need], p.N, p.K); n > 0 {
				e.packed += n
				e.released += releasePages([][]byte{b.b[off : off+need]})
			}
		}
	}
}

// packFor returns the pack for a's weights, or nil.
func (mm *MatMul) packFor(a *mulArgs) *packed {
	if len(mm.packs) == 0 || a.kd.dotPacked == nil || mm.floatActs {
		return nil
	}
	p := mm.packs[unsafe.SliceData(a.w)]
	if p == nil || p.t != a.kd.t || p.n != a.n || p.k != a.k {
		return nil
	}
	return p
}

// packedRows computes rows [lo, hi) from a.packed against every
// activation row, a run of len(buf) rows at a time as rowTask does. lo is
// a multiple of packGroup, and so is hi unless it is past the last group
// (the pool's grain is a multiple of packGroup: mulRows, mulRowsAsync).
func (a *mulArgs) packedRows(lo, hi int, buf []float32) {
	p, nb := a.packed, a.k/32
	n8 := p.n / packGroup * packGroup
	gb := packGroup * a.rb
	run := len(buf) / packGroup * packGroup
	for j0 := lo; j0 < min(hi, n8); j0 += run {
		j1 := min(hi, n8, j0+run)
		d := buf[:j1-j0]
		for i := 0; i < a.m; i++ {
			if a.xpRB > 0 {
				a.kd.dotPackedX(p.b[j0/packGroup*gb:j1/packGroup*gb], nb, a.xp[i*a.xpRB:(i+1)*a.xpRB], d)
			} else {
				a.kd.dotPacked(p.b[j0/packGroup*gb:j1/packGroup*gb], nb, a.act[i*a.actRB:(i+1)*a.actRB], d)
			}
			a.store(i, j0, d)
		}
	}
	if hi > n8 {
		j0 := max(lo, n8)
		d := buf[:hi-j0]
		for i := 0; i < a.m; i++ {
			a.kd.dotQRows(p.b[j0*a.rb:hi*a.rb], a.rb, a.act[i*a.actRB:(i+1)*a.actRB], nb, d)
			a.store(i, j0, d)
		}
	}
}

// q8PrepBytes is a Q8_0 activation block as prepQ8_0X lays it out.
const q8PrepBytes = 64

// packPrepX installs the Q8_0 packed kernel that reads prepared
// activations (a variable for the A/B benchmark and the tests).
var packPrepX = true

// prepQ8_0XGo lays out x's nb Q8_0 blocks for dotQ8_0VNNIPX, 64 bytes a
// block: the 32 codes; the four int32 terms −128·(Σx[4j:4j+4] +
// Σx[16+4j:16+4j+4]) that take the codes' +128 bias out of the VPDPBUSD
// sums (VNNI_XBLOCK's Z3); d_x as a float32 (exact); zeros. Integer sums,
// so the kernel's results equal the unprepared kernel's bit for bit.
func prepQ8_0XGo(x []byte, nb int, dst []byte) {
	_, _ = x[nb*q8_0Bytes-1], dst[nb*q8PrepBytes-1]
	for b := range nb {
		s, d := x[b*q8_0Bytes:(b+1)*q8_0Bytes], dst[b*q8PrepBytes:(b+1)*q8PrepBytes]
		copy(d[:32], s[2:34])
		for j := range 4 {
			var sum int32
			for i := range 4 {
				sum += int32(int8(s[2+4*j+i])) + int32(int8(s[18+4*j+i]))
			}
			binary.LittleEndian.PutUint32(d[32+4*j:], uint32(-128*sum))
		}
		binary.LittleEndian.PutUint32(d[48:], math.Float32bits(ggml.FP16ToFP32(binary.LittleEndian.Uint16(s))))
		clear(d[52:])
	}
}
