package channels

import "math"

// Echo: the call's audio leaking into the microphone (speakers, no
// headset), or the user's voice coming back in the call. The leaked copy
// follows the original's loudness contour a few to a few hundred
// milliseconds later, quieter; two people talking at once do not. So a
// channel's recent loudness envelope is correlated with the other's over
// the possible delays, and a close match to a louder original is echo.

// echoFrame is the envelope's resolution (10 ms at 16 kHz).
const echoFrame = 160

// EchoConfig tunes echo detection; zero values take the defaults.
type EchoConfig struct {
	// Window is how much recent audio is compared (default 1 s).
	WindowFrames int
	// MaxLagFrames is the longest delay of an echo (default 30: 300 ms).
	MaxLagFrames int
	// MinCorr is the envelope correlation that makes an echo (0.8).
	MinCorr float64
	// Louder is how much louder the original must be (default 2, 6 dB):
	// a loudspeaker's leak into a microphone is well below the call, while
	// two people on one sound path talk at about one level, and envelopes
	// alone cannot tell a leak's onset from two people starting to talk
	// within its delay (at 2 dB, one reader starting two sentences 200 ms
	// apart was echo, and the user's words were cut off).
	Louder float64
}

func (c EchoConfig) withDefaults() EchoConfig {
	if c.WindowFrames <= 0 {
		c.WindowFrames = 100
	}
	if c.MaxLagFrames <= 0 {
		c.MaxLagFrames = 30
	}
	if c.MinCorr <= 0 {
		c.MinCorr = 0.8
	}
	if c.Louder <= 0 {
		c.Louder = 2
	}
	return c
}

// envelope is the RMS of each echoFrame of x.
func envelope(x []float32) []float64 {
	out := make([]float64, len(x)/echoFrame)
	for i := range out {
		var s float64
		for _, v := range x[i*echoFrame : (i+1)*echoFrame] {
			s += float64(v) * float64(v)
		}
		out[i] = math.Sqrt(s / echoFrame)
	}
	return out
}

// IsEcho reports whether the end of mine (its last WindowFrames frames)
// is a delayed, quieter copy of other; both end at the same moment on the
// recording's timeline. It returns the best correlation too.
func IsEcho(mine, other []float32, cfg EchoConfig) (bool, float64) {
	cfg = cfg.withDefaults()
	em, eo := envelope(mine), envelope(other)
	n := cfg.WindowFrames
	if len(em) < n || len(eo) < n {
		return false, 0
	}
	em = em[len(em)-n:]
	best, bestLag := -1.0, 0
	for lag := 0; lag <= cfg.MaxLagFrames && lag+n <= len(eo); lag++ {
		seg := eo[len(eo)-n-lag : len(eo)-lag]
		if c := pearson(em, seg); c > best {
			best, bestLag = c, lag
		}
	}
	if best < cfg.MinCorr {
		return false, best
	}
	seg := eo[len(eo)-n-bestLag : len(eo)-bestLag]
	return energy(seg) >= cfg.Louder*energy(em), best
}

func energy(e []float64) float64 {
	var s float64
	for _, v := range e {
		s += v * v
	}
	return math.Sqrt(s)
}

func pearson(a, b []float64) float64 {
	var ma, mb float64
	for i := range a {
		ma += a[i]
		mb += b[i]
	}
	ma /= float64(len(a))
	mb /= float64(len(b))
	var ab, aa, bb float64
	for i := range a {
		x, y := a[i]-ma, b[i]-mb
		ab += x * y
		aa += x * x
		bb += y * y
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}
