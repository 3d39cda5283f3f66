package batch

import (
	"testing"

	"github.com/harkapp/hark/engine/kvpage"
	"github.com/stretchr/testify/require"
)

func newSched(t *testing.T, blocks, budget, seqs int) (*Scheduler, *kvpage.Pool) {
	t.Helper()
	p, err := kvpage.New(kvpage.Config{BlockSize: 16, Budget: int64(blocks), BlockBytes: 1})
	require.NoError(t, err)
	s, err := New(p, Options{TokenBudget: budget, MaxSeqs: seqs})
	require.NoError(t, err)
	return s, p
}

func tokens(n int, base int32) []int32 {
	t := make([]int32, n)
	for i := range t {
		t[i] = base + int32(i%97)
	}
	return t
}

// drive runs steps until nothing is pending, sampling token 5 for every
// sampling row, and returns the steps, checking each against the budget.
func drive(t *testing.T, s *Scheduler, budget int, each func(Step)) []Step {
	t.Helper()
	var steps []Step
	for i := 0; s.Pending(); i++ {
		require.Less(t, i, 10000, "the scheduler makes progress")
		st := s.Next()
		require.LessOrEqual(t, st.Tokens(), budget)
		if each != nil {
			each(st)
		}
		var out []int32
		for _, r := range st.Rows {
			if r.Sample {
				out = append(out, 5)
			}
		}
		require.NoError(t, s.Done(st, out))
		steps = append(steps, st)
	}
	return steps
}

// prefillTokens counts the prompt positions the steps computed.
func prefillTokens(steps []Step) int {
	n := 0
	for _, st := range steps {
		for _, r := range st.Rows {
			for i := range r.Tokens {
				if r.Pos+i < len(r.Req.Prompt) {
					n++
				}
			}
		}
	}
	return n
}

// Sixteen requests sharing a 1,000-token system prompt, arriving at once:
// the shared part is prefilled once (62 full blocks of 16), each request
// computing only its own tail; every request generates its tokens.
func TestSharedSystemPromptPrefilledOnce(t *testing.T) {
	s, p := newSched(t, 4096, 256, 16)
	system := tokens(1000, 1000)
	var reqs []*Request
	for i := range 16 {
		r := &Request{Prompt: append(append([]int32{}, system...), tokens(8, int32(3000+100*i))...), MaxTokens: 4}
		require.NoError(t, s.Submit(r))
		reqs = append(reqs, r)
	}
	steps := drive(t, s, 256, nil)
	require.Equal(t, 1008+15*(1008-62*16), prefillTokens(steps))
	for _, r := range reqs {
		require.NoError(t, r.Err)
		require.Equal(t, []int32{5, 5, 5, 5}, r.Generated)
	}
	require.Equal(t, 4096, p.Available())
}

// A long prompt arriving while streams run is chunked: every step still
// gives each running stream its decode row, and the prompt fills only
// the rest of the budget.
func TestChunkedPrefillKeepsStreamsGoing(t *testing.T) {
	s, _ := newSched(t, 1024, 64, 8)
	var streams []*Request
	for i := range 4 {
		r := &Request{Prompt: tokens(10, int32(100*i)), MaxTokens: 40}
		require.NoError(t, s.Submit(r))
		streams = append(streams, r)
	}
	st := s.Next()
	require.Len(t, st.Rows, 4)
	require.NoError(t, s.Done(st, []int32{5, 5, 5, 5}))
	long := &Request{Prompt: tokens(2000, 7), MaxTokens: 2}
	require.NoError(t, s.Submit(long))
	chunks := 0
	drive(t, s, 64, func(st Step) {
		decodes := 0
		for _, r := range st.Rows {
			if r.Req == long && !r.Sample {
				chunks++
				require.Len(t, r.Tokens, 64-4, "the prompt takes what the streams leave")
			}
			if r.Req != long && len(r.Tokens) == 1 {
				decodes++
			}
		}
		if long.seq != nil && long.seq.Computed() < 2000 && !streams[0].Done {
			require.Equal(t, 4, decodes, "no stream waits for the prompt")
		}
	})
	require.Greater(t, chunks, 10)
	require.Len(t, long.Generated, 2)
}

// With PromptBeside, a prompt arriving while streams run takes at most that
// many tokens a step beside their decode rows, and the whole budget once no
// stream runs (issue #38: the streams wait for the whole step).
func TestPromptBesideStreams(t *testing.T) {
	p, err := kvpage.New(kvpage.Config{BlockSize: 16, Budget: 1024, BlockBytes: 1})
	require.NoError(t, err)
	s, err := New(p, Options{TokenBudget: 64, MaxSeqs: 8, PromptBeside: 12})
	require.NoError(t, err)
	for i := range 4 {
		require.NoError(t, s.Submit(&Request{Prompt: tokens(10, int32(100*i)), MaxTokens: 30}))
	}
	st := s.Next()
	require.Equal(t, 40, st.Tokens(), "no stream runs yet: the whole budget")
	require.NoError(t, s.Done(st, []int32{5, 5, 5, 5}))
	long := &Request{Prompt: tokens(600, 7), MaxTokens: 2}
	require.NoError(t, s.Submit(long))
	beside, alone := 0, 0
	drive(t, s, 64, func(st Step) {
		decodes, prompt := 0, 0
		for _, r := range st.Rows {
			if r.Req == long && r.Pos < len(long.Prompt) {
				prompt += len(r.Tokens)
			} else {
				decodes++
			}
		}
		left := len(long.Prompt) - long.seq.Computed()
		switch {
		case prompt == 0:
		case decodes > 0:
			beside++
			require.Equal(t, min(12, left), prompt, "beside streams: PromptBeside tokens")
		default:
			alone++
			require.Equal(t, min(64, left), prompt, "alone: the whole budget")
		}
	})
	require.Equal(t, 29, beside, "one chunk beside each of the streams' 29 remaining decode steps")
	require.Greater(t, alone, 0)
	require.Len(t, long.Generated, 2)
}

// With LongPrompt, PromptBeside bounds only the prompts longer than it:
// beside running streams a short prompt still takes the whole budget (16
// streams arriving together are admitted as fast as without the bound),
// two long prompts share PromptBeside's tokens, and a long prompt that
// finds no room beside the streams keeps its place in the queue, ahead of
// later requests.
func TestPromptBesideLongOnly(t *testing.T) {
	p, err := kvpage.New(kvpage.Config{BlockSize: 16, Budget: 1024, BlockBytes: 1})
	require.NoError(t, err)
	s, err := New(p, Options{TokenBudget: 64, MaxSeqs: 8, PromptBeside: 12, LongPrompt: 64})
	require.NoError(t, err)
	for i := range 2 {
		require.NoError(t, s.Submit(&Request{Prompt: tokens(10, int32(100*i)), MaxTokens: 40}))
	}
	st := s.Next()
	require.Equal(t, 20, st.Tokens(), "no stream runs yet: the whole budget")
	require.NoError(t, s.Done(st, []int32{5, 5}))
	long1 := &Request{Prompt: tokens(300, 7), MaxTokens: 2}
	long2 := &Request{Prompt: tokens(200, 9), MaxTokens: 2}
	short := &Request{Prompt: tokens(64, 11), MaxTokens: 20}
	for _, r := range []*Request{long1, long2, short} {
		require.NoError(t, s.Submit(r))
	}
	st = s.Next()
	got := map[*Request]int{}
	for _, r := range st.Rows {
		got[r.Req] = len(r.Tokens)
	}
	// 2 decode rows, long1's 12 beside them; long2 finds none left and
	// waits, and short, behind it in the queue, waits with it
	require.Equal(t, map[*Request]int{st.Rows[0].Req: 1, st.Rows[1].Req: 1, long1: 12}, got)
	require.NoError(t, s.Done(st, []int32{5, 5}))
	long1Done := false
	shortAdmitted := false
	drive(t, s, 64, func(st Step) {
		decodes, longs := 0, 0
		for _, r := range st.Rows {
			switch {
			case r.Req == short && r.Pos < len(short.Prompt):
				if !shortAdmitted {
					shortAdmitted = true
					require.Positive(t, decodes, "short comes in beside the streams")
					require.Equal(t, min(64-decodes-longs, 64), len(r.Tokens), "short takes what the budget leaves, not PromptBeside's 12")
				}
			case (r.Req == long1 || r.Req == long2) && r.Pos < len(r.Req.Prompt):
				longs += len(r.Tokens)
			default:
				decodes++
			}
		}
		if decodes > 0 && longs > 0 {
			require.LessOrEqual(t, longs, 12, "the long prompts share PromptBeside beside the streams")
		}
		if long1.seq != nil && long1.seq.Computed() >= len(long1.Prompt) {
			long1Done = true
		}
	})
	require.True(t, long1Done)
	require.True(t, shortAdmitted)
	require.Len(t, long1.Generated, 2)
	require.Len(t, long2.Generated, 2)
	require.Len(t, short.Generated, 20)
}

// Higher priority is admitted first, whatever the arrival order.
func TestPriorityAdmission(t *testing.T) {
	s, _ := newSched(t, 1024, 256, 1)
	low := &Request{Prompt: tokens(4, 1), MaxTokens: 1}
	high := &Request{Prompt: tokens(4, 2), MaxTokens: 1, Priority: 1}
	require.NoError(t, s.Submit(low))
	require.NoError(t, s.Submit(high))
	st := s.Next()
	require.Len(t, st.Rows, 1)
	require.Equal(t, high, st.Rows[0].Req)
}

// Cancelling a running request frees its blocks at once; a request
// cancelled while its step runs is left out of the results.
func TestCancelFreesAtOnce(t *testing.T) {
	s, p := newSched(t, 64, 256, 4)
	a := &Request{Prompt: tokens(100, 1), MaxTokens: 50}
	b := &Request{Prompt: tokens(40, 500), MaxTokens: 50}
	require.NoError(t, s.Submit(a))
	require.NoError(t, s.Submit(b))
	st := s.Next()
	require.Equal(t, 64-7-3, p.Available())
	s.Cancel(a)
	require.Equal(t, 64-3, p.Available(), "a's 7 blocks back before the step ends")
	require.NoError(t, s.Done(st, []int32{5, 5}))
	require.ErrorIs(t, a.Err, ErrCanceled)
	require.Empty(t, a.Generated)
	require.Equal(t, []int32{5}, b.Generated)
	s.Cancel(b)
	require.False(t, s.Pending())
	require.Equal(t, 64, p.Available())
}

// With too few blocks for everyone, later requests are preempted and
// recomputed, never failed; every request finishes with all its tokens.
// One that the whole budget cannot hold fails with a clear error.
func TestPreemptionNeverFailsSilently(t *testing.T) {
	s, p := newSched(t, 12, 256, 4)
	var reqs []*Request
	for i := range 4 {
		r := &Request{Prompt: tokens(30, int32(1000*i)), MaxTokens: 40} // 70 positions: 5 blocks each
		require.NoError(t, s.Submit(r))
		reqs = append(reqs, r)
	}
	preempted := 0
	drive(t, s, 256, func(st Step) {
		for _, r := range reqs {
			if r.seq != nil && r.seq.Preempted() {
				preempted++
			}
		}
	})
	require.Positive(t, preempted)
	for _, r := range reqs {
		require.NoError(t, r.Err)
		require.Len(t, r.Generated, 40)
	}
	require.Equal(t, 12, p.Available())

	big := &Request{Prompt: tokens(300, 1), MaxTokens: 1}
	require.NoError(t, s.Submit(big))
	drive(t, s, 256, nil)
	require.ErrorIs(t, big.Err, kvpage.ErrNoRoom)
	require.Equal(t, 12, p.Available())
}

// StepCost.At: the points, linear between them, the first cost below them
// and the last segment's slope past them.
func TestStepCostAt(t *testing.T) {
	c := StepCost{{1, 1.3}, {16, 2.0}, {64, 3.2}, {65, 4.9}, {128, 5.5}}
	for _, w := range []struct {
		n    int
		cost float64
	}{{0, 1.3}, {1, 1.3}, {16, 2.0}, {40, 2.6}, {64, 3.2}, {65, 4.9}, {128, 5.5}, {191, 6.1}} {
		require.InDelta(t, w.cost, c.At(w.n), 1e-9, "%d rows", w.n)
	}
	require.Zero(t, StepCost(nil).At(5))
	require.Equal(t, 2.0, StepCost{{4, 2}}.At(9))
	o := Options{StepCost: c, BesideCost: 1.8}
	require.Equal(t, 28, o.besideRows(1, 128), "1.8 × 1.3 = 2.34: 29 rows cost 2.325")
	require.Equal(t, 48, o.besideRows(16, 128), "the GEMM past 64 rows costs 4.9 > 3.6")
	require.Equal(t, 10, o.besideRows(16, 10), "the budget bounds it")
	require.Equal(t, 1, Options{StepCost: StepCost{{1, 1}, {2, 5}}, BesideCost: 1.8}.besideRows(1, 128), "at least one row")
	require.Equal(t, 128, Options{StepCost: c}.besideRows(4, 128), "no BesideCost: no bound")
}

// Issue #38's first 16-stream level under a cost model: 16 prompts of 112
// tokens arrive together (budget 128, 16 sequences). The first step, with
// no stream running, takes the whole budget; every later step that
// carries decode rows takes the most prompt rows whose step costs at most
// BesideCost times its decode rows' own step (here 48 rows in all: the
// made-up cost is flat to 16 rows, a quarter a row to 64, then a cliff),
// several prompts' chunks together, and never a prompt row past it.
func TestPromptAdmissionBoundedByStepCost(t *testing.T) {
	p, err := kvpage.New(kvpage.Config{BlockSize: 16, Budget: 4096, BlockBytes: 1})
	require.NoError(t, err)
	cost := StepCost{{1, 10}, {16, 10}, {64, 22}, {65, 25}, {128, 27}}
	s, err := New(p, Options{TokenBudget: 128, MaxSeqs: 16, StepCost: cost, BesideCost: 1.8})
	require.NoError(t, err)
	reqs := make([]*Request, 16)
	for i := range reqs {
		reqs[i] = &Request{Prompt: tokens(112, int32(1000*i+1)), MaxTokens: 24}
		require.NoError(t, s.Submit(reqs[i]))
	}
	first, beside, multi := true, 0, 0
	drive(t, s, 128, func(st Step) {
		decodes, prompt, prompts := 0, 0, 0
		for _, r := range st.Rows {
			if r.Pos+len(r.Tokens) <= len(r.Req.Prompt) || (r.Pos < len(r.Req.Prompt) && len(r.Tokens) > 1) {
				prompt += len(r.Tokens)
				prompts++
			} else {
				decodes++
			}
		}
		if first {
			first = false
			require.Equal(t, 0, decodes)
			require.Equal(t, 128, prompt, "no stream runs: the whole budget, two prompts' chunks")
			return
		}
		if decodes == 0 || prompt == 0 {
			return
		}
		beside++
		require.LessOrEqual(t, cost.At(decodes+prompt), 1.8*cost.At(decodes)+1e-9, "a step beside streams within 1.8 × their own step")
		left := 0
		for _, r := range reqs {
			if r.Done {
				continue
			}
			if r.seq == nil {
				left += len(r.Prompt)
			} else {
				left += max(0, len(r.Prompt)-r.seq.Computed())
			}
		}
		if left > prompt { // more prompt rows waited: the step took all the cost allows
			require.Equal(t, 48-decodes, prompt, "%d decode rows", decodes)
		}
		if prompts > 1 {
			multi++
		}
	})
	require.Positive(t, beside)
	require.Positive(t, multi, "several prompts' chunks in one step")
	for i, r := range reqs {
		require.Len(t, r.Generated, 24, "request %d", i)
	}
}

// ParseStepCost: rows ascending from 1, costs positive; "" is none.
func TestParseStepCost(t *testing.T) {
	c, err := ParseStepCost("1:1.3, 16:2,65:4.9")
	require.NoError(t, err)
	require.Equal(t, StepCost{{Rows: 1, Cost: 1.3}, {Rows: 16, Cost: 2}, {Rows: 65, Cost: 4.9}}, c)
	c, err = ParseStepCost("")
	require.NoError(t, err)
	require.Nil(t, c)
	for _, bad := range []string{"0", "16:2,1:1", "1:0", "x", "4:2,", "0:1", "2:NaN"} {
		_, err = ParseStepCost(bad)
		require.Error(t, err, bad)
	}
}

// With Buckets the prompt rows beside decode rows are priced at the
// bucket their step is padded to (llm.BucketRows): 13 decode rows (a
// 16-row step, cost 10) take 19 prompt rows, a 32-row step (cost 14) within
// 1.8 × 10, not the 35 the unpadded cost allows (48 rows, padded to 64:
// cost 22).
func TestBesideRowsPricedAtBuckets(t *testing.T) {
	o := Options{StepCost: StepCost{{1, 10}, {16, 10}, {64, 22}, {65, 25}, {128, 27}}, BesideCost: 1.8}
	require.Equal(t, 35, o.besideRows(13, 128))
	o.Buckets = []int{2, 4, 8, 16, 32, 64, 128}
	require.Equal(t, 19, o.besideRows(13, 128))
	require.Equal(t, 16, o.besideRows(13, 16), "the limit still bounds")
}
