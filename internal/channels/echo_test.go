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
}
