package cpu

//go:noescape
func qgemmVNNI(panel, act *byte, nb int, out *float32)

//go:noescape
func qgemmAVX2(panel, act *byte, nb int, out *float32)

// qgemmTile bounds-checks a tile once for the assembly kernel asm.
func qgemmTile(asm func(panel, act *byte, nb int, out *float32),
	panel, act []byte, nb int, out *[qTileRows * qTileCols]float32) {
	if nb <= 0 {
		*out = [qTileRows * qTileCols]float32{}
		return
	}
	_, _ = panel[nb*qPanelBlock-1], act[nb*qTileRows*qActBlock-1]
	asm(&panel[0], &act[0], nb, &out[0])
}

func qgemmVNNITile(panel, act []byte, nb int, out *[qTileRows * qTileCols]float32) {
	qgemmTile(qgemmVNNI, panel, act, nb, out)
}

func qgemmAVX2Tile(panel, act []byte, nb int, out *[qTileRows * qTileCols]float32) {
	qgemmTile(qgemmAVX2, panel, act, nb, out)
}

//go:noescape
func qquantAVX512(x *float32, dst *byte, nb int, negoff int)

// qquantRowAVX512 is quantizeRowQ's AVX-512 version (codes may differ from
// it in float rounding of x·(1/d) only).
func qquantRowAVX512(x []float32, i, nb int, offset int32, act []byte) {
	base := (i/qTileRows)*nb*qTileRows*qActBlock + i%qTileRows*qActBlock
	_, _ = x[nb*32-1], act[base+(nb-1)*qTileRows*qActBlock+qActBlock-1]
	qquantAVX512(&x[0], &act[base], nb, int(-offset))
}

// useQGemmVNNI installs the quantized GEMM kernel and activation quantizer
// for the VNNI path (on; AMX in its place where it works, decided on first
// use) or the AVX2 one; useVNNI calls it so that the tests flipping
// useVNNI cover the GEMM too.
func useQGemmVNNI(on bool) {
	if on && hasVNNI {
		qgemmKernel, qgemmMaxCode, qgemmOverBLAS = qgemmVNNITile, 255, true
		qgemmAccel = amxKernel
		qquantRow = qquantRowAVX512
		return
	}
	qgemmKernel, qgemmMaxCode, qgemmOverBLAS = qgemmAVX2Tile, 31, false
	qgemmAccel = nil
	qquantRow = quantizeRowQ
}
