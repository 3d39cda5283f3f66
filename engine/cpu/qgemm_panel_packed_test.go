package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
)

// The panels packPanelQ8Packed takes from a load-time pack are byte for
// byte those packPanel decodes from the original rows; panels that reach
// past the last full packed group stay on packPanel. Each of this CPU's
// versions of packPanelQ8Packed runs.
func TestPackPanelFromPack(t *testing.T) {
	saved := packPanelQ8Packed
	defer func() { packPanelQ8Packed = saved }()
	versions := map[string]func(*packed, int, []byte){"generic": packPanelQ8PackedGeneric}
	addPanelVersions(t, versions)
	r := rand.New(rand.NewPCG(37, 1))
	for _, sh := range [][2]int{{45, 96}, {64, 608}, {131, 32}, {16, 64}} {
		for name, f := range versions {
			n, k := sh[0], sh[1]
			packPanelQ8Packed = f
			t.Run(fmt.Sprintf("%s/%dx%d", name, n, k), func(t *testing.T) {
				w := randWeights(r, ggml.Q8_0, n, k)
				p := packWeights(nil, ggml.Q8_0, w, n, k)
				orig := &mulArgs{kd: kinds[ggml.Q8_0], w: w, n: n, k: k, rb: k / 32 * 34}
				viaPack := &mulArgs{kd: kinds[ggml.Q8_0], n: n, k: k, rb: k / 32 * 34, packed: p}
				size := k / 32 * qPanelBlock
				fast := 0
				for j0 := 0; j0 < n; j0 += qTileCols {
					want := make([]byte, size)
					packPanel(orig, panelDecoders[ggml.Q8_0], 0, j0, want)
					if !panelFromPack(viaPack, j0) {
						require.Greater(t, j0+qTileCols, n/packGroup*packGroup, "panel %d could come from the pack", j0)
						continue
					}
					fast++
					got := make([]byte, size)
					packPanelQ8Packed(p, j0, got)
					require.Equal(t, want, got, "panel at row %d", j0)
				}
				require.Equal(t, n/qTileCols, fast, "panels taken from the pack")
			})
		}
	}
}
