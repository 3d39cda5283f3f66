package meeting

import (
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// source simulates a capture device: periods of 160 samples on its own
// clock (ppm fast), delivered after latency plus scheduling jitter, with
// a marker (a block of ones) at given true times and silence (no
// callbacks at all, as a null sink's monitor) between quiet[0] and quiet[1].
type source struct {
	ch      int
	ppm     float64
	latency time.Duration
	markers []time.Duration
	quiet   [2]time.Duration
	// late holds back every callback due between late[0] and late[1],
	// then delivers them all at late[1]: a starved capture thread.
	late [2]time.Duration
}

type delivery struct {
	ch int
	at time.Duration
	x  []float32
}

const period = 160

func (s source) periods(total time.Duration, rng *rand.Rand) []delivery {
	var out []delivery
	rate := 16000 * (1 + s.ppm*1e-6)
	for k := int64(0); ; k++ {
		end := time.Duration(float64((k+1)*period) / rate * float64(time.Second))
		if end > total {
			return out
		}
		start := end - 10*time.Millisecond
		if end > s.quiet[0] && start < s.quiet[1] {
			continue
		}
		x := make([]float32, period)
		for _, m := range s.markers {
			if m+4*time.Millisecond < start-time.Millisecond || m > end+time.Millisecond {
				continue
			}
			for i := range x {
				tt := time.Duration(float64(k*period+int64(i)) / rate * float64(time.Second))
				if tt >= m && tt < m+4*time.Millisecond {
					x[i] = 1
				}
			}
		}
		jitter := time.Duration(rng.Int64N(int64(8 * time.Millisecond)))
		at := end + s.latency + jitter
		if at >= s.late[0] && at < s.late[1] {
			at = s.late[1]
		}
		out = append(out, delivery{s.ch, at, x})
	}
}

// run feeds the deliveries in arrival order and returns where each
// channel's markers landed (rising edges), and the largest backlog seen.
func run(t *testing.T, total time.Duration, srcs ...source) ([Channels][]int, *Aligner, int) {
	rng := rand.New(rand.NewPCG(1, 2))
	var all []delivery
	for _, s := range srcs {
		all = append(all, s.periods(total, rng)...)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].at < all[j].at })
	t0 := time.Unix(1000, 0)
	a := NewAligner(t0, AlignConfig{})
	var edges [Channels][]int
	var prev [Channels]float32
	pos, maxPending := 0, 0
	var buf []float32
	for _, d := range all {
		a.Push(d.ch, d.x, t0.Add(d.at))
		maxPending = max(maxPending, a.Pending())
		buf = a.Frames(buf[:0])
		for j := 0; j < len(buf); j += Channels {
			for c := range Channels {
				if buf[j+c] == 1 && prev[c] != 1 {
					edges[c] = append(edges[c], pos)
				}
				prev[c] = buf[j+c]
			}
			pos++
		}
	}
	return edges, a, maxPending
}

func markers(from, every, to time.Duration) []time.Duration {
	var m []time.Duration
	for d := from; d < to; d += every {
		m = append(m, d)
	}
	return m
}

// TestAlignerCorrectsDrift: the system channel's clock runs 300 ppm fast
// (a generous real-world figure), for 20 minutes. Uncorrected it would be
// 360 ms ahead by the end; aligned, markers played at the same moment on
// both channels stay within twice the tolerance (plus a millisecond of
// jitter) of each other, and the correction measures the drift.
func TestAlignerCorrectsDrift(t *testing.T) {
	total := 20 * time.Minute
	m := markers(5*time.Second, 10*time.Second, total-time.Second)
	edges, a, maxPending := run(t, total,
		source{ch: You, latency: 5 * time.Millisecond, markers: m},
		source{ch: Others, ppm: 300, latency: 5 * time.Millisecond, markers: m})
	require.Len(t, edges[You], len(m))
	require.Len(t, edges[Others], len(m))
	worst := 0
	for i := range m {
		worst = max(worst, abs(edges[You][i]-edges[Others][i]))
	}
	st := a.Stats()
	t.Logf("worst marker offset %d samples; stats %+v; drift %.0f ppm; max backlog %d", worst, st, st[Others].DriftPPM(), maxPending)
	require.LessOrEqual(t, worst, 21*16, "channels drifted apart")
	require.InDelta(t, 300, st[Others].DriftPPM(), 30, "drift measured")
	require.InDelta(t, 0, st[You].DriftPPM(), 30)
	require.Less(t, maxPending, 16000, "the backlog stays bounded")
}

// TestAlignerFillsSilentChannel: the system channel delivers nothing for
// 20 s (a monitor while nothing plays): the microphone's audio is not
// held back, and audio after the gap is still aligned.
func TestAlignerFillsSilentChannel(t *testing.T) {
	total := 60 * time.Second
	m := markers(5*time.Second, 10*time.Second, total-time.Second)
	edges, a, maxPending := run(t, total,
		source{ch: You, latency: 5 * time.Millisecond, markers: m},
		source{ch: Others, latency: 5 * time.Millisecond, markers: m, quiet: [2]time.Duration{12 * time.Second, 32 * time.Second}})
	require.Len(t, edges[You], len(m))
	require.Len(t, edges[Others], len(m)-2, "the two markers in the quiet part are not there")
	you := without(edges[You], 1, 2)
	for i, e := range edges[Others] {
		require.InDelta(t, you[i], e, 21*16, "marker %d after the quiet part's", i)
	}
	st := a.Stats()
	t.Logf("stats %+v, max backlog %d", st, maxPending)
	require.InDelta(t, 20*16000, st[Others].Filled, 16000/5)
	// held back once, for StallActive, when the channel fell quiet
	require.Less(t, maxPending, 2*16000, "the microphone was held back by the silent channel")
}

// TestAlignerWaitsForLateChannel: on a loaded machine the system channel's
// callbacks stop for 1.2 s and then come all at once (nothing lost). No
// zeros go in for them: the speech in that second is neither cut nor
// shifted, and its marker stays aligned with the microphone's. (With zeros
// after the 500 ms Stall, the marker landed 1.2 s late and the channel had
// 1.2 s of silence inside its audio.)
func TestAlignerWaitsForLateChannel(t *testing.T) {
	late := [2]time.Duration{24500 * time.Millisecond, 25700 * time.Millisecond} // the marker at 25 s inside
	m, edges, a, maxPending := runLate(t, 40*time.Second, [2]time.Duration{}, late)
	require.Len(t, edges[You], len(m))
	require.Len(t, edges[Others], len(m))
	for i := range m {
		require.InDelta(t, edges[You][i], edges[Others][i], 21*16, "marker %d", i)
	}
	st := a.Stats()
	t.Logf("stats %+v, max backlog %d", st, maxPending)
	require.Zero(t, st[Others].Filled, "zeros went in for audio that was only late")
	require.Less(t, maxPending, 2*16000)
}

// TestAlignerPlacesBurstByFrameCount: the system channel's capture thread
// is held up for 2.5 s, longer than StallActive, and then delivers the
// whole backlog at once. Zeros had to go in for it after 1.5 s (the
// microphone is not held back longer); the burst's first samples are the
// ones those zeros stand for, and are dropped, so what follows is where it
// was played. (Before, the burst went in after the zeros: the channel ran
// 2 s behind the microphone and dropped one sample in 200 for minutes to
// catch up, splitting and warping whatever was said.)
func TestAlignerPlacesBurstByFrameCount(t *testing.T) {
	late := [2]time.Duration{24500 * time.Millisecond, 27 * time.Second} // the marker at 25 s inside
	m, edges, a, maxPending := runLate(t, 60*time.Second, [2]time.Duration{}, late)
	st := a.Stats()
	t.Logf("stats %+v, max backlog %d", st, maxPending)
	require.Len(t, edges[You], len(m))
	require.Len(t, edges[Others], len(m)-1, "the marker at 25 s is under the zeros")
	you, played := without(edges[You], 2, 1), without(m, 2, 1)
	for i, e := range edges[Others] {
		require.InDelta(t, you[i], e, 21*16, "marker %d but the one at 25 s", i)
		require.InDelta(t, int(played[i].Seconds()*16000), e, 21*16, "marker %d but the one at 25 s is not where it was played", i)
	}
	require.Greater(t, st[Others].Filled, int64(16000*3/2), "filled after StallActive")
	require.InDelta(t, st[Others].Filled, st[Others].Late, 2*period, "the burst's samples under the zeros dropped")
	require.Less(t, st[Others].Dropped+st[Others].Stretch, int64(2*period), "no drift correction for a late burst")
	require.InDelta(t, 2500, st[Others].MaxGapMs, 20)
	require.Less(t, maxPending, 3*16000, "the backlog (the burst, held while it settles) stays bounded")
}

// TestAlignerProcessHeldUp: the whole process is held up for 2 s (both
// capture threads, across two of the lag's windows and beyond StallActive)
// and then both deliver their backlog. Nothing was missing: no zeros go in,
// no marker is lost, and every marker stays where it was played. (Before,
// the first delivery after the hold-up, in a window of its own, read as a
// 2-s gap: both channels got 2 s of zeros in the middle of their audio and
// then dropped samples for minutes.)
func TestAlignerProcessHeldUp(t *testing.T) {
	late := [2]time.Duration{24500 * time.Millisecond, 26500 * time.Millisecond} // the marker at 25 s inside
	m, edges, a, maxPending := runLate(t, 60*time.Second, late, late)
	st := a.Stats()
	t.Logf("stats %+v, max backlog %d", st, maxPending)
	for ch := range Channels {
		require.Len(t, edges[ch], len(m), "%s", Names[ch])
		for i := range m {
			require.InDelta(t, int(m[i].Seconds()*16000), edges[ch][i], 21*16, "%s: marker %d is not where it was played", Names[ch], i)
		}
		require.Zero(t, st[ch].Filled, "%s: zeros went in for audio that was only late", Names[ch])
		require.Zero(t, st[ch].Late, "%s", Names[ch])
	}
	require.Less(t, maxPending, 3*16000, "the backlog (the bursts, held while they settle) stays bounded")
}

// runLate runs both channels (5 ms latency, markers every 10 s from
// 5 s) for total, each held up over its late span, and returns the
// markers and what run returns.
func runLate(t *testing.T, total time.Duration, lateYou, lateOthers [2]time.Duration) ([]time.Duration, [Channels][]int, *Aligner, int) {
	m := markers(5*time.Second, 10*time.Second, total-time.Second)
	edges, a, maxPending := run(t, total,
		source{ch: You, latency: 5 * time.Millisecond, markers: m, late: lateYou},
		source{ch: Others, latency: 5 * time.Millisecond, markers: m, late: lateOthers})
	return m, edges, a, maxPending
}

// without is x less its n elements from the first-th (markers a channel
// did not hear).
func without[T any](x []T, first, n int) []T {
	return slices.Delete(slices.Clone(x), first, first+n)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
