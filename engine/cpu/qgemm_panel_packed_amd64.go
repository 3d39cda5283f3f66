package cpu

import "golang.org/x/sys/cpu"

// packPanelQ8AVX512 writes the panel of the two packed Q8_0 groups at grp
// and grp+grpStride (nb blocks each) to panel: per block and half, the
// 8 rows × 16 codes are transposed as an 8×4 matrix of 32-bit words by two
// permutes, and the eight f16 scales widened by VCVTPH2PS.
//
//go:noescape
func packPanelQ8AVX512(grp *byte, grpStride, nb int, panel *byte)

// panelIdx01 and panelIdx23 pick, from a half block's 32 words (row r's
// word i at 4r+i), words i = 0 and 1 (then 2 and 3) of rows 0-7.
var (
	panelIdx01 = [16]uint32{0, 4, 8, 12, 16, 20, 24, 28, 1, 5, 9, 13, 17, 21, 25, 29}   //nolint:unused // read by qgemm_panel_packed_amd64.s only
	panelIdx23 = [16]uint32{2, 6, 10, 14, 18, 22, 26, 30, 3, 7, 11, 15, 19, 23, 27, 31} //nolint:unused // read by qgemm_panel_packed_amd64.s only
)

// panelAVX512: this CPU runs packPanelQ8AVX512.
var panelAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512VL

func init() {
	if panelAVX512 {
		packPanelQ8Packed = packPanelQ8Fast
	}
}

// packPanelQ8Fast is packPanelQ8PackedGeneric on AVX-512, bounds-checked
// once.
func packPanelQ8Fast(p *packed, j0 int, panel []byte) {
	nb := p.k / 32
	rb := nb * 34
	if nb <= 0 {
		return
	}
	_, _ = p.b[(j0+2*packGroup)*rb-1], panel[nb*qPanelBlock-1]
	packPanelQ8AVX512(&p.b[j0*rb], packGroup*rb, nb, &panel[0])
}
