package cpu

import (
	"encoding/binary"
	"math"

	"github.com/harkapp/hark/engine/ggml"
)

// panelFromPack reports whether packPanelQ8Packed can write the panel of
// weight rows [j0, j0+16): Q8_0 weights packed at load (repack.go) whose
// panel is two full packed groups.
func panelFromPack(a *mulArgs, j0 int) bool {
	p := a.packed
	return p != nil && p.t == ggml.Q8_0 && j0%packGroup == 0 && j0+qTileCols <= p.n/packGroup*packGroup
}

// packPanelQ8Packed is packPanel for panelFromPack's panels; amd64 with
// AVX-512 replaces it with packPanelQ8Fast.
var packPanelQ8Packed = packPanelQ8PackedGeneric

// packPanelQ8PackedGeneric is packPanelQ8Packed's portable version. The pack holds
// each row's codes already biased to unsigned (the panel's codes for Q8_0,
// offset 128), 16 bytes per row and half block, so the panel takes them as
// 32-bit words straight from the pack; the general path unpacked every row
// to ggml's layout, flipped the codes back and forth and then scattered
// them (11% of a 2-thread prefill's profile).
func packPanelQ8PackedGeneric(p *packed, j0 int, panel []byte) {
	const ts = 34 // Q8_0 block bytes
	nb := p.k / 32
	rb := nb * ts
	panel = panel[:nb*qPanelBlock]
	for half := range 2 {
		grp := p.b[(j0+packGroup*half)*rb : (j0+packGroup*(half+1))*rb]
		for b := range nb {
			blk := grp[b*packGroup*ts : (b+1)*packGroup*ts]
			dst := panel[b*qPanelBlock : (b+1)*qPanelBlock]
			for r := range packGroup {
				pr := packGroup*half + r
				for h := range 2 { // codes 0-15, then 16-31: panel groups 4h..4h+3
					src := blk[16+h*128+r*16 : 16+h*128+r*16+16]
					for i := range 4 {
						binary.LittleEndian.PutUint32(dst[(4*h+i)*64+4*pr:], binary.LittleEndian.Uint32(src[4*i:]))
					}
				}
				s := f16Table[binary.LittleEndian.Uint16(blk[2*r:])]
				binary.LittleEndian.PutUint32(dst[512+4*pr:], math.Float32bits(s))
			}
		}
	}
}
