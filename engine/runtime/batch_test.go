package runtime

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/batch"
	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/gguf"
	"github.com/harkapp/hark/engine/llm"
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

// $HARK_BATCH_TRACE names a file the batch engine appends its step lines
// to; one it cannot open fails the engine's load with the variable named.
func TestBatchTraceFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "steps.log")
	t.Setenv("HARK_BATCH_TRACE", path)
	r := newRT(t, Options{Backend: "cpu"})
	ctx := context.Background()
	l, err := r.LLM(ctx, storiesPath(t), Interactive)
	require.NoError(t, err)
	eng, err := l.Batch()
	require.NoError(t, err)
	l.Release()
	res, err := eng.Generate(ctx, []int32{1, 400, 59}, llm.GenerateOptions{MaxTokens: 4, IgnoreEOS: true}, 0, nil)
	require.NoError(t, err)
	require.Len(t, res.Tokens, 4)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var lines []string // the step lines (a submit line comes first)
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.HasPrefix(l, "step ") {
			lines = append(lines, l)
		}
	}
	require.Contains(t, string(b), "submit ")
	require.Len(t, lines, 4, "a prompt step and three decode steps: %q", b)
	require.Contains(t, lines[0], "decode=0 prompt=3 seqs=1")
	require.Contains(t, lines[3], "decode=1 prompt=0 seqs=1 deepest=5")

	t.Setenv("HARK_BATCH_TRACE", filepath.Join(t.TempDir(), "no-such-dir", "steps.log"))
	r2 := newRT(t, Options{Backend: "cpu"})
	l2, err := r2.LLM(ctx, storiesPath(t), Interactive)
	require.NoError(t, err)
	defer l2.Release()
	_, err = l2.Batch()
	require.ErrorContains(t, err, "HARK_BATCH_TRACE")
}

// CUDA bounds a long prompt's chunks beside running streams (4 tokens a
// step, prompts of more than one step's budget); other backends take the
// whole budget; $HARK_BATCH_PROMPT_BESIDE and $HARK_BATCH_LONG_PROMPT
// replace either (0: off, every prompt).
func TestBatchPromptBeside(t *testing.T) {
	t.Setenv("HARK_BATCH_PROMPT_BESIDE", "")
	t.Setenv("HARK_BATCH_LONG_PROMPT", "")
	b, l := promptBeside("cuda")
	require.Equal(t, [2]int{4, 128}, [2]int{b, l})
	b, l = promptBeside("cpu")
	require.Equal(t, [2]int{0, 128}, [2]int{b, l})
	t.Setenv("HARK_BATCH_PROMPT_BESIDE", "0")
	t.Setenv("HARK_BATCH_LONG_PROMPT", "0")
	b, l = promptBeside("cuda")
	require.Equal(t, [2]int{0, 0}, [2]int{b, l})
	t.Setenv("HARK_BATCH_PROMPT_BESIDE", "12")
	t.Setenv("HARK_BATCH_LONG_PROMPT", "x")
	b, l = promptBeside("cpu")
	require.Equal(t, [2]int{12, 128}, [2]int{b, l})
}

// CUDA's batch steps for an all-q8_0 model: the mat-vec products to 128
// rows, a step-cost model bounding prompt rows beside streams at 1.8x their
// step; for a model with other matrices the GEMMs from 17 rows and no
// bound, as before; other backends neither; the variables replace them (a
// malformed cost: none).
func TestBatchStepCost(t *testing.T) {
	for _, k := range []string{"HARK_BATCH_STEP_COST", "HARK_BATCH_BESIDE_COST", "HARK_BATCH_MATMUL_ROWS"} {
		t.Setenv(k, "")
	}
	q8 := &gguf.File{Tensors: []gguf.Tensor{{Name: "token_embd.weight", Type: ggml.Q8_0, Shape: []int64{576, 100}},
		{Name: "output_norm.weight", Type: ggml.F32, Shape: []int64{576}}}}
	mixed := &gguf.File{Tensors: append(slices.Clone(q8.Tensors), gguf.Tensor{Name: "output.weight", Type: ggml.Q6_K, Shape: []int64{576, 100}})}
	require.Equal(t, 129, matMulRows("cuda", q8))
	require.Equal(t, 17, matMulRows("cuda", mixed))
	require.Equal(t, 0, matMulRows("cpu", q8))
	c, r := stepCost("cuda", q8)
	require.Equal(t, 1.8, r)
	require.Len(t, c, 14)
	require.LessOrEqual(t, c.At(64), 1.8*c.At(16), "16 streams take 48 prompt rows beside them at least")
	require.Greater(t, c.At(128), 1.8*c.At(1), "a lone stream never waits for a whole budget of prompt rows")
	c, _ = stepCost("cuda", mixed)
	require.Nil(t, c, "the table is q8_0's")
	c, r = stepCost("cpu", q8)
	require.Nil(t, c)
	require.Zero(t, r)
	t.Setenv("HARK_BATCH_MATMUL_ROWS", "17")
	t.Setenv("HARK_BATCH_STEP_COST", "1:1.5, 16:2,128:6")
	t.Setenv("HARK_BATCH_BESIDE_COST", "2.5")
	require.Equal(t, 17, matMulRows("cuda", q8))
	c, r = stepCost("cpu", mixed)
	require.Equal(t, batch.StepCost{{Rows: 1, Cost: 1.5}, {Rows: 16, Cost: 2}, {Rows: 128, Cost: 6}}, c)
	require.Equal(t, 2.5, r)
	for _, bad := range []string{"0", "16:2,1:1", "1:0", "x", "4:2,"} {
		t.Setenv("HARK_BATCH_STEP_COST", bad)
		c, _ = stepCost("cuda", q8)
		require.Nil(t, c, bad)
	}
}

// CUDA's batch steps are padded to row buckets up to the 128-row budget;
// other backends' are not; $HARK_BATCH_BUCKETS replaces them ("0": none).
func TestBatchBuckets(t *testing.T) {
	t.Setenv("HARK_BATCH_BUCKETS", "")
	b := buckets("cuda")
	require.True(t, slices.IsSorted(b))
	require.Equal(t, 2, b[0])
	require.Equal(t, batch.DefaultTokenBudget, b[len(b)-1])
	require.Nil(t, buckets("cpu"))
	t.Setenv("HARK_BATCH_BUCKETS", "16, 64,128")
	require.Equal(t, []int{16, 64, 128}, buckets("cpu"))
	t.Setenv("HARK_BATCH_BUCKETS", "0")
	require.Empty(t, buckets("cuda"))
}
