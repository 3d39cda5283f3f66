package whisper

import (
	"context"
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/internal/shared"
)

// perturbedExec stands for a faulty backend: the output of the kernel
// writing the logits is passed through f as it is read back.
type perturbedExec struct {
	plan.Executable
	logits plan.BufID
	f      func(v []float32)
}

func (p perturbedExec) Read(buf plan.BufID, off int64, dst []byte) error {
	if err := p.Executable.Read(buf, off, dst); err != nil || buf != p.logits {
		return err
	}
	v := make([]float32, len(dst)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(dst[4*i:]))
	}
	p.f(v)
	for i, x := range v {
		binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(x))
	}
	return nil
}

// traceJFK transcribes jfk.wav on m and returns its windows.
func traceJFK(t *testing.T, f *File, m *Model, beams int) []WindowTrace {
	t.Helper()
	var ws []WindowTrace
	opt := DefaultTranscribeOptions()
	opt.Language = "en"
	opt.BeamSize = beams
	opt.OnWindow = func(w WindowTrace) { ws = append(ws, w) }
	_, err := f.TranscribeFile(context.Background(), m, shared.Path(t, "audio", "jfk.wav"), opt)
	require.NoError(t, err)
	require.NotEmpty(t, ws)
	return ws
}

// The teacher-forced comparison (the GPU-vs-CPU check of long
// transcriptions, shaders/msltest) passes for two CPU models, exactly, and
// fails for a backend whose logits kernel is off: scaled by 1.05 (the
// logits stray) or lowering each top logit (a choice the
// reference makes by far more than a near-tie changes). Each model
// encodes the window once; the replays restore that pass (encodeMemo).
func TestCompareForced(t *testing.T) {
	t.Parallel()
	tol := ForcedTolerance{NearTie: 0.1, Logprob: 0.05, Logit: 0.01}
	for _, beams := range []int{1, 5} {
		f, ref := loadKitBeams(t, "ggml-kit-tiny.en-q8_0.bin", beams)
		got, err := f.Load(kitBackend(t), Options{Beams: beams})
		require.NoError(t, err)
		t.Cleanup(func() { got.Close() })
		refMemo, gotMemo := kitMemoEncodes(t, ref, "ggml-kit-tiny.en-q8_0.bin"), kitMemoEncodes(t, got, "ggml-kit-tiny.en-q8_0.bin")
		ws := traceJFK(t, f, ref, beams)

		rep, err := CompareForced(ref, got, ws, tol)
		require.NoError(t, err, "beams %d", beams)
		require.Equal(t, len(ws), rep.Windows)
		require.Greater(t, rep.Steps, 20)
		require.Empty(t, rep.NearTies)
		require.Zero(t, rep.MaxLogprobDiff)
		require.Zero(t, rep.MaxLogitDiff)

		exec := got.exec
		got.exec = perturbedExec{exec, got.lay.logits, func(v []float32) {
			for i := range v {
				v[i] *= 1.05
			}
		}}
		_, err = CompareForced(ref, got, ws, tol)
		require.ErrorContains(t, err, "logit", "beams %d: logits scaled by 1.05", beams)
		t.Logf("beams %d: scaled: %v", beams, err)
		// Unbounded, the report names the largest differences and where.
		inf := ForcedTolerance{NearTie: float32(math.Inf(1)), Logprob: math.Inf(1), Logit: math.Inf(1)}
		srep, err := CompareForced(ref, got, ws, inf)
		require.NoError(t, err)
		require.InDelta(t, 0.05, srep.MaxLogitDiff, 1e-6, "beams %d", beams)
		require.Greater(t, srep.MaxLogprobDiff, 0.0)
		for _, at := range []StepAt{srep.MaxLogitAt, srep.MaxLogprobAt} {
			require.Less(t, at.Window, len(ws))
			require.Less(t, at.Step, len(ws[at.Window].Result.Tokens))
		}

		// 10 off each row's top logit: where the reference's choice wins by
		// less than that (jfk: 8 to 15 at each step) the choice changes.
		got.exec = perturbedExec{exec, got.lay.logits, func(v []float32) {
			for r := 0; r < len(v); r += got.H.NVocab {
				v[r+int(argmax(v[r:r+got.H.NVocab]))] -= 10
			}
		}}
		_, err = CompareForced(ref, got, ws, ForcedTolerance{NearTie: 0.1, Logprob: math.Inf(1), Logit: math.Inf(1)})
		require.ErrorContains(t, err, "by a margin of", "beams %d: top logits lowered", beams)
		t.Logf("beams %d: %d windows, %d steps; perturbed: %v", beams, rep.Windows, rep.Steps, err)
		got.exec = exec
		// (each replay encodes the first window on both models)
		require.GreaterOrEqual(t, refMemo.hits, 4, "beams %d: the reference's replays encoded again", beams)
		require.GreaterOrEqual(t, gotMemo.hits, 3, "beams %d", beams)
	}
}
