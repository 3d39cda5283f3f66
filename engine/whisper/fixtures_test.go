package whisper

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"
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

// memoKeep is how many encoder passes a test's own encodeMemo keeps (each
// is the encoder output and every decoder layer's cross-attention K/V: 21
// MB for the kit model).
const memoKeep = 4

// kitMemoKeep is how many passes the store a kit model file's tests share
// keeps (kitMemoEncodes; 8 unless listed): the f16 file's holds the 30
// clips' passes for the stream test's last windows and TestKitClipsBeam5
// (840 MB at most); the q8_0 file's tests share only jfk's. What a test
// restores from its own last passes (encodeMemo.recent) does not depend on
// these: the stores only spare passes across tests.
var kitMemoKeep = map[string]int{"ggml-kit-tiny.en-f16.bin": 40}

// encodeMemo wraps a model's executable so that encoding a mel whose pass
// its store holds restores that pass's results (the encoder output and the
// cross-attention K/V, all the state the pass writes) instead of running
// it again. The encoder is deterministic, so the restored state is the
// state the pass would write (TestEncodeMemo checks it bit for bit, and
// across beam counts); tests that transcribe the same audio more than once
// to compare the decoding (host and backend selection, teacher-forced
// replays, lossless containers, greedy and beam search, offline and the
// stream's last window) skip the repeated passes.
type encodeMemo struct {
	plan.Executable
	store   *memoStore
	melBuf  plan.BufID
	melSize int64
	mel     []byte
	melOK   bool // mel holds the whole mel buffer as last written
	bufs    []plan.BufID
	size    int64       // of each of bufs
	hits    int         // passes this wrapper restored
	save    bool        // keep the passes it runs in store (else only look them up)
	recent  []*memoPass // its own last memoKeep passes, run or restored, whatever the store drops
}

// memoStore holds encoder passes by their mel's hash, the newest keep of
// them, for the encodeMemos that share it (one test's, or every test's of
// one kit model file). A pass another test is running is waited for, not
// run twice: parallel tests that encode the same windows (the long-form
// greedy and beam runs) take turns instead.
type memoStore struct {
	mu       sync.Mutex
	keep     int
	saved    []*memoPass // oldest first
	runs     int         // passes run for the store (reported by TestMain with -v)
	restores int
}

type memoPass struct {
	key  [32]byte
	done chan struct{} // closed when data is set, or the pass failed (data nil)
	data [][]byte
}

// claim returns the pass saved under key (own false), waiting for it if it
// is still running; otherwise a new pass that the caller runs and ends
// with finish (own true), or with save false none (nil: the caller runs
// the pass and keeps nothing).
func (s *memoStore) claim(key [32]byte, save bool) (p *memoPass, own bool) {
	for {
		s.mu.Lock()
		i := slices.IndexFunc(s.saved, func(p *memoPass) bool { return p.key == key })
		if i < 0 {
			s.runs++
		}
		if i < 0 && !save {
			s.mu.Unlock()
			return nil, true
		}
		if i < 0 {
			p = &memoPass{key: key, done: make(chan struct{})}
			s.saved = append(s.saved, p)
			if len(s.saved) > s.keep {
				s.saved = s.saved[1:] // (a running pass dropped here still ends its waiters' wait)
			}
			s.mu.Unlock()
			return p, true
		}
		p = s.saved[i]
		s.mu.Unlock()
		<-p.done
		if p.data != nil {
			s.mu.Lock()
			s.restores++
			s.mu.Unlock()
			return p, false
		}
		// (the pass failed and was dropped: run it here)
	}
}

// finish records a claimed pass's data, or with nil drops it (the pass
// failed), and wakes the tests that wait for it.
func (s *memoStore) finish(p *memoPass, data [][]byte) {
	if data == nil {
		s.mu.Lock()
		s.saved = slices.DeleteFunc(s.saved, func(q *memoPass) bool { return q == p })
		s.mu.Unlock()
	}
	p.data = data
	close(p.done)
}

// memoEncodes wraps m's executable in an encodeMemo of its own until the
// test ends.
func memoEncodes(t testing.TB, m *Model) *encodeMemo {
	return wrapEncodes(t, m, &memoStore{keep: memoKeep})
}

var kitMemos struct {
	mu     sync.Mutex
	byFile map[string]*memoStore
}

// kitMemoEncodes wraps m, a model of the kit file name (of any beam
// count: the encoder pass does not depend on it), in an encodeMemo that
// shares its passes with every test's kitMemoEncodes of that file.
func kitMemoEncodes(t testing.TB, m *Model, name string) *encodeMemo {
	kitMemos.mu.Lock()
	s := kitMemos.byFile[name]
	if s == nil {
		if kitMemos.byFile == nil {
			kitMemos.byFile = map[string]*memoStore{}
		}
		s = &memoStore{keep: kitMemoKeep[name]}
		if s.keep == 0 {
			s.keep = 2 * memoKeep
		}
		kitMemos.byFile[name] = s
	}
	kitMemos.mu.Unlock()
	return wrapEncodes(t, m, s)
}

// logKitMemos prints, for each kit model file, how many encoder passes its
// tests' shared store ran and how many it restored instead.
func logKitMemos() {
	kitMemos.mu.Lock()
	defer kitMemos.mu.Unlock()
	for _, name := range slices.Sorted(maps.Keys(kitMemos.byFile)) {
		s := kitMemos.byFile[name]
		fmt.Printf("kit encoder passes, %s: %d run, %d restored\n", name, s.runs, s.restores)
	}
}

func wrapEncodes(t testing.TB, m *Model, s *memoStore) *encodeMemo {
	exec := m.exec
	bufs, size := passBufs(m)
	e := &encodeMemo{Executable: exec, store: s, melBuf: m.lay.mel, melSize: int64(m.H.NMels*m.H.NFrames()) * 4,
		bufs: bufs, size: size, save: true}
	m.exec = e
	t.Cleanup(func() { m.exec = exec })
	return e
}

// passBufs lists the buffers an encoder pass writes and the size of each.
func passBufs(m *Model) ([]plan.BufID, int64) {
	return append(append([]plan.BufID{m.lay.encOut}, m.lay.crossK...), m.lay.crossV...), int64(m.H.NAudioCtx*m.H.NAudioState) * 4
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
	own := false
	i := slices.IndexFunc(e.recent, func(p *memoPass) bool { return p.key == key })
	var p *memoPass
	if i >= 0 {
		p = e.recent[i]
	} else {
		p, own = e.store.claim(key, e.save)
	}
	if !own {
		for i, b := range e.bufs {
			if err := e.Executable.Write(b, 0, p.data[i]); err != nil {
				return err
			}
		}
		e.hits++
		e.remember(p)
		return nil
	}
	if p == nil {
		return e.Executable.Run(pass, vars)
	}
	data, err := e.encode(pass, vars)
	e.store.finish(p, data)
	if err == nil {
		e.remember(p)
	}
	return err
}

// remember makes p the newest of the wrapper's own last passes.
func (e *encodeMemo) remember(p *memoPass) {
	e.recent = append(slices.DeleteFunc(e.recent, func(q *memoPass) bool { return q == p }), p)
	if len(e.recent) > memoKeep {
		e.recent = e.recent[1:]
	}
}

// encode runs the pass and reads back the state it wrote (nil on error).
func (e *encodeMemo) encode(pass int, vars *plan.Vars) ([][]byte, error) {
	if err := e.Executable.Run(pass, vars); err != nil {
		return nil, err
	}
	data := make([][]byte, len(e.bufs))
	for i, b := range e.bufs {
		data[i] = make([]byte, e.size)
		if err := e.Executable.Read(b, 0, data[i]); err != nil {
			return nil, err
		}
	}
	return data, nil
}

// A window encoded again through the memo leaves the model in the state a
// real pass leaves: the encoder output and the logits of the next decoder
// step equal those of a model without the memo, bit for bit, after
// another window was encoded in between. A changed mel is encoded for
// real. The pass does not depend on the beam count (kitMemoEncodes shares
// passes across it): a beam-5 model's pass writes what a greedy one's
// does, bit for bit.
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

	pass := func(m *Model) [][]byte {
		require.NoError(t, m.Encode(jfk))
		bufs, size := passBufs(m)
		out := make([][]byte, len(bufs))
		for i, b := range bufs {
			out[i] = make([]byte, size)
			require.NoError(t, m.exec.Read(b, 0, out[i]))
		}
		return out
	}
	_, greedy := loadKit(t, "ggml-kit-tiny.en-f16.bin")
	_, beam := loadKitBeams(t, "ggml-kit-tiny.en-f16.bin", 5)
	require.True(t, slices.EqualFunc(pass(greedy), pass(beam), bytes.Equal), "a beam-5 model's encoder pass differs from a greedy one's")
}
