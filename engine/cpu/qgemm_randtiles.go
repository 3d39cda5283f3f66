package cpu

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
)

// randQTiles fills a panel (codes up to maxCode, float scales) and an
// activation group (int8 codes, scales, corrections) for nb blocks: the
// AMX probe's self-test data, and the kernel tests'.
func randQTiles(r *rand.Rand, panel, act []byte, maxCode int) {
	nb := len(panel) / qPanelBlock
	for b := 0; b < nb; b++ {
		p := panel[b*qPanelBlock:]
		for i := 0; i < 512; i++ {
			p[i] = byte(r.IntN(maxCode + 1))
		}
		for c := 0; c < qTileCols; c++ {
			binary.LittleEndian.PutUint32(p[512+4*c:], math.Float32bits(float32(r.Float64())))
		}
		for i := 0; i < qTileRows; i++ {
			blk := act[(b*qTileRows+i)*qActBlock:][:qActBlock]
			for e := 0; e < 32; e++ {
				blk[e] = byte(r.Uint32())
			}
			binary.LittleEndian.PutUint32(blk[32:], math.Float32bits(float32(r.Float64())))
			binary.LittleEndian.PutUint32(blk[36:], uint32(int32(r.IntN(1<<16))-1<<15))
		}
	}
}
