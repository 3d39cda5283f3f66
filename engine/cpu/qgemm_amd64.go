package cpu

//go:noescape
func qgemmVNNI(panel, act *byte, nb int, out *float32)

// qgemmVNNITile bounds-checks the tile once for the assembly.
func qgemmVNNITile(panel, act []byte, nb int, out *[qTileRows * qTileCols]float32) {
	if nb <= 0 {
		*out = [qTileRows * qTileCols]float32{}
		return
	}
	_, _ = panel[nb*qPanelBlock-1], act[nb*qTileRows*qActBlock-1]
	qgemmVNNI(&panel[0], &act[0], nb, &out[0])
}

func init() {
	if hasVNNI {
		qgemmKernel, qgemmFast = qgemmVNNITile, true
	}
}
