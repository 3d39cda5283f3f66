package whisper

import (
	"crypto/sha256"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/cpu"
	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/internal/shared"
)

// The package's shared fixtures: kit models lent from a pool (a model is
// loaded once per test running at the same time, not once per test) and a
// memo of encoder passes for tests that encode the same window twice.

// kitKey names one kind of pooled model.
type kitKey struct {
	name  string
	beams int
}

// kitLoan is a pooled model with its own file and single-threaded backend
// (nothing is shared between models that run at the same time).
type kitLoan struct {
	f  *File
	m  *Model
	be *cpu.Backend
}

func (l kitLoan) close() {
	l.m.Close()
	l.be.Close()
	l.f.Close()
}

var kitPool struct {
	mu   sync.Mutex
	idle map[kitKey][]kitLoan
}

// closeKitPool closes every idle model (TestMain, after the tests).
func closeKitPool() {
	kitPool.mu.Lock()
	defer kitPool.mu.Unlock()
	for _, ls := range kitPool.idle {
		for _, l := range ls {
			l.close()
		}
	}
	kitPool.idle = nil
}

// loadKit lends a kit model, as loadKitBeams does.
func loadKit(t testing.TB, name string) (*File, *Model) {
	t.Helper()
	return loadKitBeams(t, name, 1)
}

// loadKitBeams lends the test a kit model whose plan decodes beams
// sequences at once, on a kitBackend of its own, until the test ends. A
// test that failed, or left the model changed (its executable wrapped, host
// selection on), closes it instead of giving it back. Benchmarks get a
// model of their own on a default backend.
func loadKitBeams(t testing.TB, name string, beams int) (*File, *Model) {
	t.Helper()
	if _, ok := t.(*testing.B); ok {
		f, err := OpenFile(shared.Path(t, "whisper-kit", "models", name))
		require.NoError(t, err)
		t.Cleanup(func() { f.Close() })
		m, err := f.Load(kitBackend(t), Options{Beams: beams})
		require.NoError(t, err)
		t.Cleanup(func() { m.Close() })
		return f, m
	}
	key := kitKey{name, beams}
	path := shared.Path(t, "whisper-kit", "models", name)
	kitPool.mu.Lock()
	var l kitLoan
	if ls := kitPool.idle[key]; len(ls) > 0 {
		l, kitPool.idle[key] = ls[len(ls)-1], ls[:len(ls)-1]
	}
	kitPool.mu.Unlock()
	if l.m == nil {
		f, err := OpenFile(path)
		require.NoError(t, err)
		be := cpu.New(cpu.Options{Threads: 1})
		m, err := f.Load(be, Options{Beams: beams})
		if err != nil {
			be.Close()
			f.Close()
		}
		require.NoError(t, err)
		l = kitLoan{f, m, be}
	}
	exec := l.m.exec
	t.Cleanup(func() {
		if t.Failed() || l.m.exec != exec || l.m.hostSelect {
			l.close()
			return
		}
		kitPool.mu.Lock()
		defer kitPool.mu.Unlock()
		if kitPool.idle == nil {
			kitPool.idle = map[kitKey][]kitLoan{}
		}
		kitPool.idle[key] = append(kitPool.idle[key], l)
	})
	return l.f, l.m
}

// kitBackend is a single-threaded CPU backend, closed with the test. The
// model tests run in parallel (t.Parallel), one model per CPU: a model on
// one thread never waits at an operation's barrier for a descheduled
// peer, which on the shared 2-core machine cost up to twice the CPU time
// of an encoder pass and more of the decoder's small steps (see
// runKitStreams). The package's references hold for any thread count.
// Benchmarks keep the default (one worker per core), which BENCHMARKS.md
// reports.
func kitBackend(t testing.TB) *cpu.Backend {
	threads := 1
	if _, ok := t.(*testing.B); ok {
		threads = 0
	}
	be := cpu.New(cpu.Options{Threads: threads})
	t.Cleanup(be.Close)
	return be
}

// memoKeep is how many encoder passes an encodeMemo keeps (each is the
// encoder output and every decoder layer's cross-attention K/V: 21 MB for
// the kit model).
const memoKeep = 4

// encodeMemo wraps a model's executable so that encoding a mel it encoded
// in one of its last memoKeep passes restores that pass's results (the
// encoder output and the cross-attention K/V, all the state the pass
// writes) instead of running it again. The encoder is deterministic, so the
// restored state is the state the pass would write (TestEncodeMemo checks
// it bit for bit); tests that transcribe the same audio more than once to
// compare the decoding (host and backend selection, teacher-forced
// replays, lossless containers) skip the repeated passes.
type encodeMemo struct {
	plan.Executable
	melBuf  plan.BufID
	melSize int64
	mel     []byte
	melOK   bool // mel holds the whole mel buffer as last written
	bufs    []plan.BufID
	size    int64 // of each of bufs
	saved   []memoPass
	hits    int
}

type memoPass struct {
	key  [32]byte
	data [][]byte
}

// memoEncodes wraps m's executable in an encodeMemo until the test ends.
func memoEncodes(t testing.TB, m *Model) *encodeMemo {
	exec := m.exec
	e := &encodeMemo{Executable: exec, melBuf: m.lay.mel, melSize: int64(m.H.NMels*m.H.NFrames()) * 4,
		bufs: append(append([]plan.BufID{m.lay.encOut}, m.lay.crossK...), m.lay.crossV...),
		size: int64(m.H.NAudioCtx*m.H.NAudioState) * 4}
	m.exec = e
	t.Cleanup(func() { m.exec = exec })
	return e
}

func (e *encodeMemo) Write(buf plan.BufID, off int64, src []byte) error {
	if buf == e.melBuf {
		e.melOK = off == 0 && int64(len(src)) == e.melSize
		e.mel = append(e.mel[:0], src...)
	}
	return e.Executable.Write(buf, off, src)
}

func (e *encodeMemo) Run(pass int, vars *plan.Vars) error {
	if pass != PassEncode || !e.melOK {
		return e.Executable.Run(pass, vars)
	}
	key := sha256.Sum256(e.mel)
	for _, s := range e.saved {
		if s.key == key {
			for i, b := range e.bufs {
				if err := e.Executable.Write(b, 0, s.data[i]); err != nil {
					return err
				}
			}
			e.hits++
			return nil
		}
	}
	if err := e.Executable.Run(pass, vars); err != nil {
		return err
	}
	s := memoPass{key: key, data: make([][]byte, len(e.bufs))}
	for i, b := range e.bufs {
		s.data[i] = make([]byte, e.size)
		if err := e.Executable.Read(b, 0, s.data[i]); err != nil {
			return err
		}
	}
	e.saved = append(e.saved, s)
	if len(e.saved) > memoKeep {
		e.saved = e.saved[1:]
	}
	return nil
}

// A window encoded again through the memo leaves the model in the state a
// real pass leaves: the encoder output and the logits of the next decoder
// step equal those of a model without the memo, bit for bit, after
// another window was encoded in between. A changed mel is encoded for
// real.
func TestEncodeMemo(t *testing.T) {
	t.Parallel()
	_, m := loadKit(t, "ggml-kit-tiny.en-q8_0.bin")
	_, plain := loadKit(t, "ggml-kit-tiny.en-q8_0.bin")
	jfk := readF32(t, shared.Path(t, "whisper-kit", "reference", "tensors", "jfk.mel.f32"))
	other := append([]float32(nil), jfk...)
	for i := range other {
		other[i] *= 0.5
	}
	state := func(m *Model, mel []float32) ([]float32, []float32) {
		require.NoError(t, m.Encode(mel))
		enc := make([]float32, m.H.NAudioCtx*m.H.NAudioState)
		require.NoError(t, m.EncoderOutput(enc))
		logits, err := m.Prompt([]int32{50257, 50362}, 0)
		require.NoError(t, err)
		return enc, append([]float32(nil), logits...)
	}
	memo := memoEncodes(t, m)
	wantEnc, wantLogits := state(plain, jfk)
	state(m, jfk)
	otherEnc, _ := state(m, other)
	require.Zero(t, memo.hits)
	require.NotEqual(t, math32bits(wantEnc), math32bits(otherEnc))
	enc, logits := state(m, jfk)
	require.Equal(t, 1, memo.hits)
	require.Equal(t, math32bits(wantEnc), math32bits(enc), "encoder output")
	require.Equal(t, math32bits(wantLogits), math32bits(logits), "logits after the restored pass")
}
