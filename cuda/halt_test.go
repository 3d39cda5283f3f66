package cuda

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/plan"
)

// A chain's halt word (plan.ChainHalt): every launch of the steps from
// From on carries the word's address and running value, the earlier
// steps' none; once a step's kernel would see the word changed, the
// later launches return at once (the fake marks them halted, as the
// entry's check does) while the batches are still issued and counted;
// graphs recorded from a halted chain bake the word in and are not
// replayed for a chain without it; a further read-back (io.Also) comes
// inside the batch's one wait; a misplaced word is refused before
// anything runs.
func TestFakeChainHalt(t *testing.T) {
	f := withFake(t, 90)
	b, ex := loadPatched(t, Options{})
	c := ex.(plan.IOChainer)
	e := ex.(*Exec)
	const word = 8 // byte of buffer 0 (x)
	steps := func() ([]int, []plan.Vars) {
		ps, vs := make([]int, 6), make([]plan.Vars, 6)
		for i := range vs {
			vs[i] = plan.Vars{plan.VarPos: int64(i), plan.VarNTok: 1}
		}
		return ps, vs
	}
	setWord := func(v uint32) {
		require.NoError(t, ex.Write(0, word, binary.LittleEndian.AppendUint32(nil, v)))
	}
	also := make([]byte, 4)
	chain := func(halt *plan.ChainHalt, stopAfter int) (int, []fakeLaunch) {
		t.Helper()
		setWord(7)
		ps, vs := steps()
		io := plan.ChainIO{In: 0, Out: 1, Dst: make([]byte, 4), Also: []plan.ChainRead{{Buf: 0, Off: word, Dst: also}}, Halt: halt}
		n0 := len(f.launches)
		b.ResetStats()
		n, err := c.RunPassesIO(ps, vs, 2, &io, func(done int) bool {
			want := uint32(7)
			if done > stopAfter {
				want = 9
			}
			require.Equal(t, want, binary.LittleEndian.Uint32(also), "the word read back with the batch")
			if done == stopAfter {
				setWord(9) // what a kernel of this batch would have written
			}
			return true
		})
		require.NoError(t, err)
		require.Equal(t, 3, b.Stats().Syncs, "one wait a batch, the further read-back in it")
		return n, f.launches[n0:]
	}
	halt := &plan.ChainHalt{Buf: 0, Off: word, Running: 7, From: 1}
	for round := range 3 { // launched, recorded, replayed
		n, ls := chain(halt, 4)
		require.Equal(t, 6, n, "every step issued and counted")
		require.Len(t, ls, 6)
		for i, l := range ls {
			if i < halt.From {
				require.Zero(t, l.prm.halt, "round %d: step %d is before From", round, i)
			} else {
				require.Equal(t, e.ptrs[0]+word, l.prm.halt, "round %d step %d", round, i)
				require.Equal(t, int32(7), l.prm.running)
			}
			require.Equal(t, i >= 4, l.halted, "round %d: step %d runs its work until the word changed", round, i)
			// the first batch's key differs (its first step is before
			// From): seen in rounds 0 and 1, replayed in 2; the others'
			// recorded in round 0's last batch
			require.Equal(t, round == 2 || (round == 1 && i >= 2), l.replayed, "round %d step %d", round, i)
		}
	}

	// the same steps without the word: other graphs, nothing halted
	for round := range 3 {
		_, ls := chain(nil, 4)
		for i, l := range ls {
			require.Zero(t, l.prm.halt)
			require.False(t, l.halted)
			// its batches share one key, recorded in round 0's second
			require.Equal(t, round > 0 || i >= 4, l.replayed, "round %d step %d: graphs of its own", round, i)
		}
	}

	ps, vs := steps()
	n := len(f.launches)
	for _, bad := range []plan.ChainHalt{{Buf: 0, Off: 16*64*4 - 2}, {Buf: 0, Off: 6}, {Buf: 7}} {
		io := plan.ChainIO{In: 0, Out: 1, Halt: &bad}
		_, err := c.RunPassesIO(ps, vs, 2, &io, nil)
		require.ErrorContains(t, err, "halt word")
	}
	_, err := c.RunPassesIO(ps, vs, 2, &plan.ChainIO{In: 0, Out: 1, Also: []plan.ChainRead{{Buf: 1, Off: 16 * 64 * 4, Dst: also}}}, nil)
	require.ErrorContains(t, err, "outside buffer")
	require.Len(t, f.launches, n, "nothing issued for a bad halt word or read")
}

// A chain's lead steps (plan.ChainIO.Lead): issued first, kernel by
// kernel after the input's write, with no wait of their own; the batches
// start after them, done sees the first with the lead counted, and the
// batches' graphs replay from chain to chain whatever the lead was.
func TestFakeChainLead(t *testing.T) {
	f := withFake(t, 90)
	b, ex := loadPatched(t, Options{})
	c := ex.(plan.IOChainer)
	for round := range 3 {
		lead := 1 + round // a prompt of another length every chain
		ps, vs := make([]int, lead+4), make([]plan.Vars, lead+4)
		for i := range vs {
			vs[i] = plan.Vars{plan.VarPos: int64(i), plan.VarNTok: 1}
			if i < lead {
				vs[i][plan.VarNTok] = int64(2 + round) // the lead's own shape
			}
		}
		src := []byte{byte(round)}
		io := plan.ChainIO{In: 0, Src: src, Out: 0, Dst: make([]byte, 1), Lead: lead}
		b.ResetStats()
		n0 := len(f.launches)
		var seen []int
		n, err := c.RunPassesIO(ps, vs, 2, &io, func(done int) bool {
			require.Equal(t, src, io.Dst, "the input written before the lead")
			seen = append(seen, done)
			return true
		})
		require.NoError(t, err)
		require.Equal(t, lead+4, n)
		require.Equal(t, []int{lead + 2, lead + 4}, seen, "round %d: the batches start after the lead", round)
		require.Equal(t, 2, b.Stats().Syncs, "round %d: the lead waits with the first batch", round)
		ls := f.launches[n0:]
		require.Len(t, ls, lead+4)
		for i, l := range ls {
			require.Equal(t, i >= lead && round > 0, l.replayed, "round %d step %d", round, i)
		}
	}
}
