package place

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBottomCentre(t *testing.T) {
	x, y := BottomCentre(Rect{0, 0, 800, 600}, 460, 96)
	require.Equal(t, []float64{170, 454}, []float64{x, y})
	// A second monitor to the right, below a 24-pixel panel bar.
	x, y = BottomCentre(Rect{1920, 24, 1200, 1176}, 460, 96)
	require.Equal(t, []float64{2290, 1006}, []float64{x, y})
}

func TestBelowCaret(t *testing.T) {
	work := Rect{0, 0, 800, 600}
	for _, c := range []struct {
		name  string
		caret Rect
		x, y  float64
	}{
		{"below, text under the caret", Rect{100, 80, 1, 17}, 88, 103},
		{"no room below: above the line", Rect{100, 550, 1, 17}, 88, 448},
		{"right edge: kept on the screen", Rect{780, 80, 1, 17}, 340, 103},
		{"left edge", Rect{4, 80, 1, 17}, 0, 103},
		{"a caret off the screen still gives a panel on it", Rect{-50, -40, 0, 17}, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			x, y := BelowCaret(c.caret, work, 460, 96)
			require.Equal(t, []float64{c.x, c.y}, []float64{x, y})
		})
	}
	// Wider than the screen: the left edge stays on it.
	x, _ := BelowCaret(Rect{100, 80, 1, 17}, Rect{0, 0, 300, 600}, 460, 96)
	require.Equal(t, 0.0, x)
}

func TestContains(t *testing.T) {
	r := Rect{1920, 0, 1200, 1200}
	require.True(t, r.Contains(1920, 0))
	require.False(t, r.Contains(3120, 10))
	require.False(t, r.Contains(100, 10))
}
