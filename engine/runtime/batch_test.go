package runtime

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// A batch engine's turn of the model yields it between steps: a
// dictation's clean-up queued while the engine holds the model gets it at
// the engine's next yield, and the engine steps again only once the
// dictation gave it back.
func TestBatchTurnYieldsToDictation(t *testing.T) {
	r := newRT(t, Options{Backend: "cpu"})
	ctx := context.Background()
	path := storiesPath(t)
	l, err := r.LLM(ctx, path, Interactive)
	require.NoError(t, err)
	eng, err := l.Batch()
	require.NoError(t, err)
	require.NotNil(t, eng, "the CPU backend batches")
	again, err := l.Batch()
	require.NoError(t, err)
	require.Same(t, eng, again, "one engine per loaded model")
	turn := &llmTurn{r: r, e: l.e, m: l.e.model.(*llmModel)}
	l.Release()

	require.NoError(t, turn.Take(ctx))
	got := make(chan *LLMModel)
	go func() {
		d, err := r.LLM(ctx, path, Dictation)
		if err != nil {
			panic(err)
		}
		got <- d
	}()
	waiting(t, r, path, 1)
	yielded := make(chan error, 1)
	go func() { yielded <- turn.Yield(ctx) }()
	d := <-got // granted at the yield
	select {
	case <-yielded:
		t.Fatal("the engine took the model back while the dictation held it")
	default:
	}
	d.Release()
	require.NoError(t, <-yielded)
	turn.Give()
}

// The CPU batches API requests by default; a GPU backend only when asked
// (Options.BatchGPU), since its lone streams decode slower batched.
func TestBatchesOnWhichBackends(t *testing.T) {
	require.True(t, batches("cpu", Options{}))
	require.False(t, batches("cuda", Options{}))
	require.False(t, batches("metal", Options{}))
	require.True(t, batches("cuda", Options{BatchGPU: true}))
	require.True(t, batches("cpu", Options{BatchGPU: true}))
}
