package channels

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/testaudio"
)

// TestIsEcho: a quieter copy of the call, 120 ms late, with a little noise,
// is echo; the same voice as loud as the call is not (both sides talk),
// nor is another voice over the call, nor the call's copy without the
// call.
func TestIsEcho(t *testing.T) {
	call := testaudio.Load(t, "jfk")[16000 : 16000*4]
	you := testaudio.Load(t, "librivox-sense-and-sensibility-0870")[16000 : 16000*4]
	delay := 1920 // 120 ms
	leak := make([]float32, len(call))
	for i := delay; i < len(call); i++ {
		leak[i] = 0.3*call[i-delay] + 0.002*float32((i*7919)%200-100)/100
	}
	echo, c := IsEcho(leak, call, EchoConfig{})
	t.Logf("leak: corr %.3f", c)
	require.True(t, echo, "the call leaking into the microphone")
	echo, c = IsEcho(call, leak, EchoConfig{})
	t.Logf("reverse: corr %.3f", c)
	require.False(t, echo, "the louder original is never the echo")
	echo, c = IsEcho(you, call, EchoConfig{})
	t.Logf("two voices: corr %.3f", c)
	require.False(t, echo, "a different voice is not echo")
	both := make([]float32, len(call))
	for i := range both {
		both[i] = you[i] + leak[i]
	}
	echo, c = IsEcho(both, call, EchoConfig{})
	t.Logf("voice over leak: corr %.3f", c)
	require.False(t, echo, "the user talking over the call's echo is still heard")
	echo, _ = IsEcho(leak, make([]float32, len(call)), EchoConfig{})
	require.False(t, echo, "nothing to echo")
	// One reader starting two sentences 200 ms apart on the two channels,
	// at one level, out of a sound server's digital silence: the two steps
	// up look like a leak's onset, but neither side is the louder (at 2 dB
	// this was echo, and the live transcript cut the user's words off).
	onset := func(x []float32, at int) []float32 {
		y := make([]float32, 16000*3/2)
		copy(y[at:], x)
		return y
	}
	echo, c = IsEcho(onset(testaudio.Load(t, "librivox-sense-and-sensibility-0880"), 16000*9/10),
		onset(testaudio.Load(t, "librivox-sense-and-sensibility-0930"), 16000*7/10), EchoConfig{})
	t.Logf("one reader, two sentences starting together: corr %.3f", c)
	require.False(t, echo, "two sentences starting out of silence together are not echo")
}
