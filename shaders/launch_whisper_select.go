package shaders

import (
	"fmt"

	"github.com/harkapp/hark/engine/plan"
)

// Launch rules of the greedy selection's row kernels, whisper_filter and
// whisper_track: threadgroups over segments of Tuning.WhisperSegment
// logits, so a 51,864-token row spreads over dozens of multiprocessors
// instead of one (issue #36); a row's last group to finish combines the
// segments' partials (scratch) through a ticket word.
func init() {
	register(plan.WhisperFilter, func(d *plan.Dispatch, t *Tuning, dst []Launch) ([]Launch, error) {
		a := plan.DecodeWhisperFilter(d)
		return whisperRowLaunch(dst, "whisper_filter", a.N, a.M, whisperFilterPartWords, t)
	})
	register(plan.WhisperTrack, func(d *plan.Dispatch, t *Tuning, dst []Launch) ([]Launch, error) {
		return whisperRowLaunch(dst, "whisper_track", plan.DecodeWhisperTrack(d).N, 1, whisperTrackPartWords, t)
	})
}

// The partials a segment leaves in scratch, in words: whisper_filter's
// maxima and exponential sums of text and timestamps (WF_PART_WORDS),
// whisper_track's maximum and sum.
const (
	whisperFilterPartWords = 4
	whisperTrackPartWords  = 2
)

// WhisperOneSegment as Tuning.WhisperSegment makes whisper_filter and
// whisper_track one threadgroup a row: no group reads what another wrote
// (for GPUs without a device-scope fence, as SampleOneSegment).
const WhisperOneSegment = 1 << 30

// whisperRowLaunch is fn over m rows of n logits, part scratch words a
// (row, segment); nothing for an empty product. Its groups have at least
// a SIMD-group, so whisper_track's repetition guard has a thread a unit
// length (plan.TrackRepeatMaxUnit, 32).
func whisperRowLaunch(dst []Launch, fn string, n, m, part int, t *Tuning) ([]Launch, error) {
	if n == 0 || m == 0 {
		return dst, nil
	}
	if m > TicketWords {
		return dst, fmt.Errorf("shaders: %s over %d rows, the tickets count %d", fn, m, TicketWords)
	}
	seg := max(32, uint64(normKnob(t.WhisperSegment, 2048)))
	nseg := (uint64(n) + seg - 1) / seg
	scratch := 4 * uint64(part) * uint64(m) * nseg
	if scratch > maxScratch {
		return dst, fmt.Errorf("shaders: %s scratch of %d bytes too large", fn, scratch)
	}
	limit := normKnob(t.WhisperThreads, 256)
	if nseg == 1 { // one group a row (WhisperOneSegment) takes the widest: the row is all its work
		limit = 1024
	}
	threads := simdThreads(uint32(min(uint64(n), seg)), limit, t)
	return append(dst, Launch{Function: fn, Groups: [3]uint32{uint32(nseg), uint32(m), 1}, Threads: [3]uint32{threads, 1, 1},
		Scratch: uint32(scratch), Tickets: uint32(m)}), nil
}
