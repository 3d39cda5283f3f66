package app

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/harkapp/hark/engine/runtime"
	"github.com/harkapp/hark/engine/whisper"
)

// liveStream is one dictation's streaming transcription: the recorder
// feeds it the samples as they arrive (pre-roll included), it shows the
// committed and tentative text as the speaker goes on, and at release it
// decodes only the uncommitted tail, so the final text costs the same
// however long the dictation was. It holds the speech model from the
// moment it gets it until it finishes.
type liveStream struct {
	mu      sync.Mutex
	pend    []float32
	ended   bool
	started bool
	wake    chan struct{}
	done    chan struct{}
	res     *whisper.Result
	err     error
	// stopStep cancels a decode step in flight at release: the tail decode
	// covers its audio anyway.
	stopStep context.CancelFunc
	cancel   context.CancelFunc // ends the wait for the model
}

// errNotStreamed: the stream never got the model (a file job held it).
var errNotStreamed = errors.New("the live stream did not start")

// startLiveStream starts a streaming transcription with the settings'
// speech model and language; its text goes out as "dictation:partial"
// events ({text, committed, tentative}).
func (d *Dictation) startLiveStream() *liveStream {
	ctx, cancel := context.WithCancel(context.Background())
	stepCtx, stopStep := context.WithCancel(ctx)
	l := &liveStream{wake: make(chan struct{}, 1), done: make(chan struct{}), stopStep: stopStep, cancel: cancel}
	show := func(committed, tentative string) {
		d.deps.emit.Emit(EventDictationPartial, PartialText{
			Text: strings.TrimSpace(committed + tentative), Committed: committed, Tentative: tentative})
	}
	go func() {
		defer close(l.done)
		defer cancel()
		l.err = d.runLiveStream(ctx, stepCtx, l, show)
	}()
	return l
}

func (d *Dictation) runLiveStream(ctx, stepCtx context.Context, l *liveStream, show func(committed, tentative string)) error {
	plan := d.livePlan.Load()
	model := ""
	if plan != nil {
		model = plan.model
	}
	path, _, err := d.deps.models.resolveSpeech(model)
	if err != nil {
		return err
	}
	set, err := d.deps.settings.Get()
	if err != nil {
		return err
	}
	d.liveUsed.Store(nil)
	return d.deps.models.withSpeech(ctx, path, runtime.Dictation, func(m *runtime.SpeechModel) error {
		l.mu.Lock()
		if l.ended {
			l.mu.Unlock()
			return errNotStreamed // released before the model was free
		}
		l.started = true
		l.mu.Unlock()
		sm := whisper.NewStreamModel(m.File, m.Model)
		if plan != nil {
			// The dictation's mode: language, task, vocabulary prompt and bias.
			used := plan.steer(&sm.Options, m.File)
			d.liveUsed.Store(&used)
		} else if set.Language != "auto" {
			sm.Options.Language = set.Language
		}
		var committed, tentative string
		st := whisper.NewStreamer(sm, d.streamConfig, func(e whisper.StreamEvent) {
			if e.Type == whisper.EventCommitted {
				committed += e.Text
			} else {
				tentative = e.Text
			}
			show(committed, tentative)
		})
		for {
			select {
			case <-l.wake:
			case <-ctx.Done():
				return ctx.Err()
			}
			l.mu.Lock()
			x, ended := l.pend, l.ended
			l.pend = nil
			l.mu.Unlock()
			if len(x) > 0 {
				if err := st.Write(stepCtx, x); err != nil && stepCtx.Err() == nil {
					return err
				}
			}
			if ended {
				if err := ctx.Err(); err != nil {
					return err // aborted: no tail decode
				}
				res, err := st.Finish(ctx)
				l.res = res
				return err
			}
		}
	})
}

// feed adds captured samples (called from the capture goroutine: never
// blocks on the decoder).
func (l *liveStream) feed(x []float32) {
	l.mu.Lock()
	l.pend = append(l.pend, x...)
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// finish ends the audio and returns the streamed transcript (the tail
// decoded), or errNotStreamed at once when the stream never started.
func (l *liveStream) finish() (*whisper.Result, error) {
	l.mu.Lock()
	l.ended = true
	started := l.started
	l.mu.Unlock()
	l.stopStep()
	select {
	case l.wake <- struct{}{}:
	default:
	}
	if !started {
		l.cancel() // the goroutine stops waiting (or sees ended) and gives up
		return nil, errNotStreamed
	}
	<-l.done
	return l.res, l.err
}

// abort ends the stream without its tail decode (a canceled dictation:
// its text belongs to no one) and waits for a started stream to let the
// speech model go.
func (l *liveStream) abort() {
	l.cancel() // first: a goroutine that sees ended sees the cancel too
	l.mu.Lock()
	l.ended = true
	started := l.started
	l.mu.Unlock()
	l.stopStep()
	if started {
		<-l.done
	}
}

// previewer is a Recorder that can stream its recording as it goes.
type previewer interface {
	SetLive(func() *liveStream)
}

// livePreview lets a recorder stream its recordings through the shared
// speech model.
func (d *Dictation) livePreview(r Recorder) {
	if p, ok := r.(previewer); ok {
		p.SetLive(d.startLiveStream)
	}
}

// streamedRecorder is a Recorder whose last recording was transcribed as
// it went.
type streamedRecorder interface {
	Streamed() *whisper.Result
}

// finishDictation stores the dictation's text: the live stream's final
// transcript when the recorder streamed it, else one transcription of the
// samples following plan (the stream never got the model, failed, or heard
// nothing). A translating mode always transcribes the whole recording:
// streamed commits are made on the spoken words' timing, which a
// translation does not keep.
func (d *Dictation) finishDictation(ctx context.Context, id int64, rec Recorder, r Recording, plan *wordPlan) (Item, error) {
	if s, ok := rec.(streamedRecorder); ok && (plan == nil || !plan.translate) {
		if res := s.Streamed(); res != nil && res.Text != "" {
			model := ""
			if plan != nil {
				model = plan.model
			}
			_, name, err := d.deps.models.resolveSpeech(model)
			if err == nil {
				var used []string
				if u := d.liveUsed.Load(); u != nil {
					used = *u
				}
				return d.deps.transcription.storeTranscript(id, res, name, plan, used)
			}
		}
	}
	return d.deps.transcription.transcribeWith(ctx, id, "", r.Samples, dictationBeams, runtime.Dictation, nil, plan)
}
