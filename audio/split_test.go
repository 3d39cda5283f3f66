package audio

import (
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSplit: each channel of a three-channel stream, read in step in
// uneven pieces from the one decode, is that channel's samples in order,
// and the samples held for a channel not yet read stay within a block.
func TestSplit(t *testing.T) {
	const ch, frames = 3, 10007
	data := make([]float32, ch*frames)
	for i := range data {
		data[i] = float32(i)
	}
	chs := Split(FromSamples(data, 48000, ch))
	require.Len(t, chs, ch)
	got := make([][]float32, ch)
	buf := make([]float32, 700)
	for step := 0; ; step++ {
		ended := 0
		for i, c := range chs {
			require.Equal(t, 48000, c.SampleRate())
			require.Equal(t, 1, c.Channels())
			n, err := c.Read(buf[:300+step%400])
			if err == io.EOF {
				ended++
				continue
			}
			require.NoError(t, err)
			got[i] = append(got[i], buf[:n]...)
			require.LessOrEqual(t, len(c.(*splitChannel).s.pend[(i+1)%ch]), splitBlock+700, "held for a channel read in step")
		}
		if ended == ch {
			break
		}
	}
	for i := range got {
		require.Len(t, got[i], frames)
		for f, v := range got[i] {
			require.Equal(t, float32(f*ch+i), v)
		}
	}
	require.NoError(t, chs[0].Close())
	require.NoError(t, chs[1].Close(), "the source closes once")
}
