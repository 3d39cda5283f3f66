package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/harkapp/hark/app/store"
	"github.com/harkapp/hark/engine/runtime"
	"github.com/harkapp/hark/engine/whisper"
)

// Job statuses.
const (
	JobQueued   = "queued"
	JobRunning  = "running"
	JobDone     = "done"
	JobFailed   = "failed"
	JobCanceled = "canceled"
)

// Job is a transcription job; its ID is the history item's.
type Job struct {
	ID       int64             `json:"id"`
	Name     string            `json:"name"`
	Status   string            `json:"status"` // queued | running | done | failed | canceled
	Progress float64           `json:"progress"`
	Error    string            `json:"error"`
	Text     string            `json:"text"`
	Segments []whisper.Segment `json:"segments"`
	Model    string            `json:"model"`
}

// Progress is the payload of "transcription:progress": the fraction done
// and, when a window has just finished, its segments so far.
type Progress struct {
	ID       int64            `json:"id"`
	Progress float64          `json:"progress"`
	Segment  *whisper.Segment `json:"segment,omitempty"`
}

type job struct {
	Job
	prevStatus string // the item's status before it was queued, restored on cancel
	cancel     context.CancelFunc
	done       chan struct{}
}

// Transcription runs file jobs one at a time, first in first out (one
// speech model, used by one job at a time); results land in History.
type Transcription struct {
	deps transcriptionDeps

	mu     sync.Mutex
	jobs   []*job // this session's jobs, in the order added
	wake   chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// transcriptionDeps is what Transcription uses of the app: the items'
// store and the recordings folder (an upload becomes an item's audio),
// the uploads, the speech models (which one a name means, and the shared
// one held), the history, the settings (vocabulary), and whether the app
// is closing.
type transcriptionDeps struct {
	db      *store.Store
	emit    Emitter
	recDir  string
	uploads *uploads
	models  speechModels
	history interface {
		Get(id int64) (Item, error)
		save(it Item) error
	}
	settings settingsReader
	closed   func() bool
}

// speechModels is what a service uses of Models to transcribe.
type speechModels interface {
	resolveSpeech(arg string) (path, name string, err error)
	withSpeech(ctx context.Context, path string, pri runtime.Priority, f func(*runtime.SpeechModel) error) error
}

func newTranscription(deps transcriptionDeps) *Transcription {
	ctx, cancel := context.WithCancel(context.Background())
	return &Transcription{deps: deps, wake: make(chan struct{}, 1), ctx: ctx, cancel: cancel}
}

// Add queues an upload (the id the bridge's /api/upload returned) for
// transcription with model ("" = the settings' speech model, else an
// installed model's name) and creates its history item. The upload becomes
// the item's audio, under the recordings, and is deleted with it. Nothing
// is decoded up front: a file that cannot be read fails its job. Paths are
// never accepted here: this method is reachable over HTTP (Files.Add is the
// window's, for native drops and the file dialog).
func (t *Transcription) Add(upload, model string) (Job, error) {
	if upload == "" {
		return Job{}, errors.New("no file given")
	}
	if strings.ContainsAny(upload, `/\`) {
		return Job{}, errNotPath
	}
	if _, _, err := t.deps.models.resolveSpeech(model); err != nil {
		return Job{}, err
	}
	up, err := t.deps.uploads.take(upload)
	if err != nil {
		return Job{}, err
	}
	defer up.discard()
	audio := filepath.Join(t.deps.recDir, upload+"-"+up.name)
	if err := os.Rename(up.path, audio); err != nil {
		return Job{}, fmt.Errorf("keeping %s: %w", up.name, err)
	}
	r := Item{Kind: KindFile, Title: up.name, AudioPath: audio, Status: StatusRecorded}.row()
	row, err := t.deps.db.InsertItem(r)
	if err != nil {
		os.Remove(audio)
		return Job{}, err
	}
	return t.enqueue(row.ID, model)
}

// Jobs lists this session's jobs in the order they were added.
func (t *Transcription) Jobs() ([]Job, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Job, 0, len(t.jobs))
	for _, j := range t.jobs {
		out = append(out, j.Job)
	}
	return out, nil
}

// Job returns one job of this session.
func (t *Transcription) Job(id int64) (Job, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if j := t.find(id); j != nil {
		return j.Job, nil
	}
	return Job{}, fmt.Errorf("no transcription job %d", id)
}

// Cancel stops a queued or running job; its item goes back to the state it
// was in (a new file: pending).
func (t *Transcription) Cancel(id int64) error {
	t.mu.Lock()
	j := t.find(id)
	if j == nil || (j.Status != JobQueued && j.Status != JobRunning) {
		t.mu.Unlock()
		return fmt.Errorf("no queued or running job %d", id)
	}
	if j.Status == JobQueued {
		t.finishLocked(j, JobCanceled, "")
		done := j.Job
		t.mu.Unlock()
		t.restore(j)
		t.deps.emit.Emit(EventTranscriptionDone, done)
		return nil
	}
	j.cancel()
	t.mu.Unlock()
	return nil
}

// ClearFinished drops the finished jobs from the list (the items stay in
// History).
func (t *Transcription) ClearFinished() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	kept := t.jobs[:0]
	for _, j := range t.jobs {
		if j.Status == JobQueued || j.Status == JobRunning {
			kept = append(kept, j)
		}
	}
	t.jobs = kept
	return nil
}

// find returns the latest job for id (t.mu held).
func (t *Transcription) find(id int64) *job {
	for i := len(t.jobs) - 1; i >= 0; i-- {
		if t.jobs[i].ID == id {
			return t.jobs[i]
		}
	}
	return nil
}

// enqueue queues a job for item id.
func (t *Transcription) enqueue(id int64, model string) (Job, error) {
	if t.deps.closed() {
		return Job{}, errClosed
	}
	it, err := t.deps.history.Get(id)
	if err != nil {
		return Job{}, err
	}
	if it.Status == StatusRecording {
		return Job{}, fmt.Errorf("item %d is still being recorded", id)
	}
	if it.audioFile() == "" {
		return Job{}, fmt.Errorf("item %d has no audio", id)
	}
	_, name, err := t.deps.models.resolveSpeech(model)
	if err != nil {
		return Job{}, err
	}
	t.mu.Lock()
	if j := t.find(id); j != nil && (j.Status == JobQueued || j.Status == JobRunning) {
		t.mu.Unlock()
		return Job{}, fmt.Errorf("item %d is already being transcribed", id)
	}
	j := &job{Job: Job{ID: id, Name: it.Title, Status: JobQueued, Model: name, Segments: []whisper.Segment{}},
		prevStatus: it.Status, done: make(chan struct{})}
	if model != "" {
		j.Model = model // a path stays a path: the job resolves it again when it runs
	}
	// The item is marked before the worker can see the job, so a fast job's
	// "transcribing" and "done" are never overwritten by this "queued".
	if err := t.deps.db.SetItemStatus(id, StatusQueued, ""); err != nil {
		t.mu.Unlock()
		return Job{}, err
	}
	t.jobs = append(t.jobs, j)
	queued := j.Job
	t.mu.Unlock()
	t.deps.emit.Emit(EventTranscriptionQueued, queued)
	select {
	case t.wake <- struct{}{}:
	default:
	}
	return queued, nil
}

// start runs the worker.
func (t *Transcription) start() {
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		for {
			for t.runNext() {
			}
			select {
			case <-t.ctx.Done():
				return
			case <-t.wake:
			}
		}
	}()
}

// runNext runs the oldest queued job; false when there is none.
func (t *Transcription) runNext() bool {
	if t.ctx.Err() != nil {
		return false
	}
	t.mu.Lock()
	var j *job
	for _, c := range t.jobs {
		if c.Status == JobQueued {
			j = c
			break
		}
	}
	if j == nil {
		t.mu.Unlock()
		return false
	}
	ctx, cancel := context.WithCancel(t.ctx)
	j.cancel = cancel
	j.Status = JobRunning
	t.mu.Unlock()
	defer cancel()

	t.deps.emit.Emit(EventTranscriptionProgress, Progress{ID: j.ID})
	it, err := t.transcribeWith(ctx, j.ID, j.Model, nil, speechBeams, runtime.Batch, func(p float64, seg *whisper.Segment) {
		t.mu.Lock()
		if p >= 0 {
			j.Progress = p
		}
		if seg != nil {
			j.Segments = append(j.Segments, *seg)
		}
		p = j.Progress
		t.mu.Unlock()
		t.deps.emit.Emit(EventTranscriptionProgress, Progress{ID: j.ID, Progress: p, Segment: seg})
	}, nil)
	t.mu.Lock()
	switch {
	case err == nil:
		j.Text, j.Segments, j.Progress = it.Text, it.Segments, 1
		t.finishLocked(j, JobDone, "")
	case ctx.Err() != nil:
		t.finishLocked(j, JobCanceled, "")
	default:
		t.finishLocked(j, JobFailed, err.Error())
	}
	done := j.Job
	t.mu.Unlock()
	if done.Status == JobCanceled {
		t.restore(j)
	}
	t.deps.emit.Emit(EventTranscriptionDone, done)
	return true
}

func (t *Transcription) finishLocked(j *job, status, errText string) {
	j.Status, j.Error = status, errText
	select {
	case <-j.done:
	default:
		close(j.done)
	}
}

// restore puts a canceled job's item back in the state it was queued
// from.
func (t *Transcription) restore(j *job) {
	st := j.prevStatus
	if st == StatusQueued || st == StatusTranscribing || st == "" {
		st = StatusRecorded
	}
	if err := t.deps.db.SetItemStatus(j.ID, st, ""); err != nil {
		log.Printf("hark: restoring item %d after a canceled job: %v", j.ID, err)
	}
}

// cancelAndWait cancels the job on id, if any, and waits for it to end.
func (t *Transcription) cancelAndWait(id int64) {
	t.mu.Lock()
	j := t.find(id)
	t.mu.Unlock()
	if j == nil {
		return
	}
	_ = t.Cancel(id) // it may have ended meanwhile: done is closed either way
	<-j.done
}

func (t *Transcription) close() {
	t.cancel()
	t.wg.Wait()
	t.mu.Lock()
	for _, j := range t.jobs {
		if j.Status == JobQueued {
			t.finishLocked(j, JobCanceled, "")
			t.restore(j)
		}
	}
	t.mu.Unlock()
}

// transcribeWith transcribes item id with model ("" = the settings'),
// from samples when given (16 kHz mono, as dictation captured them) or
// else from its audio file, following plan (nil: the settings'
// vocabulary, no mode; plan.model, if set, replaces model), and stores
// the result in the item. progress (may be nil) gets the fraction done, or
// -1 with each finished segment. beams is the beam size at temperature 0:
// file jobs use speechBeams (the CLI's default) for accuracy, dictation 1
// (greedy, openai's transcribe() default) for latency.
func (t *Transcription) transcribeWith(ctx context.Context, id int64, model string, samples []float32, beams int, pri runtime.Priority, progress func(float64, *whisper.Segment), plan *wordPlan) (Item, error) {
	it, err := t.deps.history.Get(id)
	if err != nil {
		return Item{}, err
	}
	fail := func(err error) (Item, error) {
		if ctx.Err() == nil {
			it.Status, it.Error = StatusFailed, err.Error()
			if it.Text != "" {
				it.Status = StatusDone // a failed re-transcription keeps the old text
			}
			if err := t.deps.history.save(it); err != nil {
				log.Printf("hark: recording the failure of item %d: %v", it.ID, err)
			}
			t.deps.emit.Emit(EventHistoryChanged, it)
		}
		return Item{}, err
	}
	path, name, err := t.deps.models.resolveSpeech(model)
	if err != nil {
		return fail(err)
	}
	set, err := t.deps.settings.Get()
	if err != nil {
		return fail(err)
	}
	if plan == nil {
		if plan, err = planFor(set, "", false); err != nil {
			return fail(err)
		}
	}
	if err := t.deps.db.SetItemStatus(id, StatusTranscribing, ""); err != nil {
		return Item{}, err
	}
	if plan.model != "" {
		if path, name, err = t.deps.models.resolveSpeech(plan.model); err != nil {
			return fail(err)
		}
	}
	var res *whisper.Result
	var used []string
	err = t.deps.models.withSpeech(ctx, path, pri, func(m *runtime.SpeechModel) error {
		opt := whisper.DefaultTranscribeOptions()
		opt.BeamSize = min(max(beams, 1), speechBeams)
		if pri == runtime.Batch {
			opt.BeforeWindow = m.Yield // a dictation goes first
		}
		used = plan.steer(&opt, m.File)
		// Voice commands count only when set apart by pauses, which
		// the word times show (rewrite.Commands).
		opt.WordTimestamps = plan.rw.HasCommands()
		if progress != nil {
			opt.OnProgress = func(p float64) { progress(p, nil) }
			opt.OnSegment = func(s whisper.Segment) {
				progress(-1, &s)
			}
		}
		var err error
		if samples != nil {
			res, err = m.File.TranscribeSamples(ctx, m.Model, samples, opt)
		} else {
			res, err = m.File.TranscribeFile(ctx, m.Model, it.audioFile(), opt)
		}
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			return Item{}, ctx.Err()
		}
		return fail(err)
	}
	return t.storeTranscript(id, res, name, plan, used)
}

// storeTranscript stores res, transcribed by model name following plan
// (with the prompt terms used), as item id's text.
func (t *Transcription) storeTranscript(id int64, res *whisper.Result, name string, plan *wordPlan, used []string) (Item, error) {
	it, err := t.deps.history.Get(id)
	if err != nil {
		return Item{}, err
	}
	it.Text = strings.TrimSpace(res.Text)
	it.Segments = segmentsOf(res)
	it.Language = res.Language
	it.Model = name
	if d := int64(res.Duration*1000 + 0.5); d > 0 {
		it.DurationMs = d
	}
	it.Status, it.Error = StatusDone, ""
	if err := t.deps.history.save(it); err != nil {
		return Item{}, err
	}
	if err := t.recordContext(id, plan, used); err != nil {
		return Item{}, err
	}
	it, err = t.deps.history.Get(id)
	if err == nil {
		t.deps.emit.Emit(EventHistoryChanged, it)
	}
	return it, err
}

// recordContext stores the mode and prompt terms an item was made with.
func (t *Transcription) recordContext(id int64, p *wordPlan, used []string) error {
	if used == nil {
		used = []string{}
	}
	mode := ""
	if p != nil {
		mode = p.mode
	}
	raw, _ := json.Marshal(used)
	return t.deps.db.SetItemContext(id, mode, string(raw))
}
