package channels

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/whisper/mel"
	"github.com/harkapp/hark/internal/speakers"
)

// TestChannelProgress: a pass's progress weighs each channel by the
// speech it let through; a channel with none counts for nothing, and
// none at all tells nothing.
func TestChannelProgress(t *testing.T) {
	var got []float64
	on := func(d float64) { got = append(got, d) }
	require.Nil(t, channelProgress([speakers.Count]*mel.SpooledSpectrogram{}, nil))

	p := channelProgress([speakers.Count]*mel.SpooledSpectrogram{{NFrames: 100}, {NFrames: 300}}, on)
	p(0, 0.5)
	p(0, 1)
	p(1, 0.5)
	p(1, 1)
	require.Equal(t, []float64{0.125, 0.25, 0.625, 1}, got)

	got = nil
	p = channelProgress([speakers.Count]*mel.SpooledSpectrogram{nil, {NFrames: 300}}, on)
	p(1, 0.5)
	p(1, 1)
	require.Equal(t, []float64{0.5, 1}, got)

	got = nil
	channelProgress([speakers.Count]*mel.SpooledSpectrogram{}, on)(0, 1)
	require.Empty(t, got)
}
