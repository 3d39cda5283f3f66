package shaders

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/plan"
)

// whisper_filter and whisper_track over Whisper's 51,864 logits: the cuda
// family's 1024-logit segments (51 groups a row, a ticket word a row,
// the partials' scratch); one segment (WhisperOneSegment) takes a whole
// row in a group of 1024 threads; a short row one group of as few threads
// as cover it.
func TestWhisperSelectLaunchGeometry(t *testing.T) {
	filter := plan.WhisperFilterArgs{N: 51864, M: 5, Ldx: 51864, Flags: plan.FlagTimestamps}.Dispatch()
	track := plan.WhisperTrackArgs{N: 51864, Cap: 448}.Dispatch()
	cuda := TuningFor("cuda")
	one := cuda
	one.WhisperSegment = WhisperOneSegment
	for _, c := range []struct {
		d       plan.Dispatch
		tune    *Tuning
		want    Launch
		comment string
	}{
		{filter, &cuda, Launch{Function: "whisper_filter", Groups: [3]uint32{51, 5, 1}, Threads: [3]uint32{256, 1, 1}, Scratch: 4 * 4 * 5 * 51, Tickets: 5}, "cuda"},
		{track, &cuda, Launch{Function: "whisper_track", Groups: [3]uint32{51, 1, 1}, Threads: [3]uint32{256, 1, 1}, Scratch: 4 * 2 * 51, Tickets: 1}, "cuda"},
		{filter, &one, Launch{Function: "whisper_filter", Groups: [3]uint32{1, 5, 1}, Threads: [3]uint32{1024, 1, 1}, Scratch: 4 * 4 * 5, Tickets: 5}, "one segment"},
		{track, &one, Launch{Function: "whisper_track", Groups: [3]uint32{1, 1, 1}, Threads: [3]uint32{1024, 1, 1}, Scratch: 4 * 2, Tickets: 1}, "one segment"},
		{plan.WhisperTrackArgs{N: 300, Cap: 8}.Dispatch(), &cuda, Launch{Function: "whisper_track", Groups: [3]uint32{1, 1, 1}, Threads: [3]uint32{320, 1, 1}, Scratch: 4 * 2, Tickets: 1}, "short row"},
	} {
		lns, err := LaunchFor(&c.d, c.tune, nil)
		require.NoError(t, err, c.comment)
		require.Equal(t, []Launch{c.want}, lns, c.comment)
	}
	empty := plan.WhisperFilterArgs{N: 51864}.Dispatch()
	lns, err := LaunchFor(&empty, &cuda, nil)
	require.NoError(t, err)
	require.Empty(t, lns, "no rows, no launch")
}
