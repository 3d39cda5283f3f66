package runtime

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/harkapp/hark/engine/backends"
	"github.com/harkapp/hark/engine/whisper"
)

// SpeechModel is a Whisper model held from the cache: use it, then
// Release it.
type SpeechModel struct {
	File    *whisper.File
	Model   *whisper.Model
	Backend string // the backend it runs on

	r   *Runtime
	e   *entry
	pri Priority
	out bool // released (or lost in a Yield)
}

// Speech waits for the Whisper model at path at priority pri (loading it
// when needed) and returns it held; ctx bounds the wait.
func (r *Runtime) Speech(ctx context.Context, path string, pri Priority) (*SpeechModel, error) {
	e, err := r.acquire(ctx, path, pri, func(backend string, pri *atomic.Int32) (loaded, error) {
		return r.loadSpeech(path, backend, pri)
	})
	if err != nil {
		return nil, err
	}
	m := e.model.(*speechModel)
	return &SpeechModel{File: m.f, Model: m.m, Backend: m.be.Name(), r: r, e: e, pri: pri}, nil
}

// Release gives the model back to the cache. Calling it again is a no-op.
func (s *SpeechModel) Release() {
	if s.out {
		return
	}
	s.out = true
	s.r.release(s.e)
}

// Yield lets a more urgent request (a dictation during a file job) use the
// model, then waits for it again; it returns at once when none waits. Set
// it as whisper.TranscribeOptions.BeforeWindow. On error the model is no
// longer held (Release is then a no-op).
func (s *SpeechModel) Yield(ctx context.Context) error {
	return s.yield(ctx, false)
}

// Share is Yield to requests of the holder's own priority as well: each
// waiting one gets the model in turn (round robin) before it comes back.
// A long holder (a stream, a long file) sets it between its windows so
// that it takes only its share of a model others wait for.
func (s *SpeechModel) Share(ctx context.Context) error {
	return s.yield(ctx, true)
}

func (s *SpeechModel) yield(ctx context.Context, equal bool) error {
	if s.out {
		return errors.New("runtime: yield of a released model")
	}
	if err := s.r.yield(ctx, s.e, s.pri, equal); err != nil {
		s.out = true
		return err
	}
	return nil
}

type speechModel struct {
	f       *whisper.File
	be      backends.Backend
	m       *whisper.Model
	release func() // returns be to the runtime
}

// loadSpeech opens the file while the backend opens: a GPU's driver,
// context and kernels take ~0.3 s, reading and checking the file ~30 ms
// (H200, kit tiny.en), and neither needs the other.
func (r *Runtime) loadSpeech(path, backend string, pri *atomic.Int32) (*speechModel, error) {
	type opened struct {
		f   *whisper.File
		err error
	}
	fc := make(chan opened, 1)
	go func() {
		f, err := whisper.OpenFile(path)
		fc <- opened{f, err}
	}()
	be, err := r.openBackend(backend, pri)
	o := <-fc
	if err != nil {
		if o.f != nil {
			o.f.Close()
		}
		return nil, err
	}
	if o.err != nil {
		r.closeBackend(backend)
		return nil, o.err
	}
	f := o.f
	m, err := f.Load(be, whisper.Options{Beams: r.opt.WhisperBeams})
	if err != nil {
		r.closeBackend(backend)
		f.Close()
		return nil, err
	}
	return &speechModel{f: f, be: be, m: m, release: func() { r.closeBackend(backend) }}, nil
}

func (s *speechModel) close() {
	s.m.Close()
	s.release()
	s.f.Close()
}

func (s *speechModel) backendName() string { return s.be.Name() }
