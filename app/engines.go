package app

import (
	"fmt"
	"sync"
	"time"

	"github.com/harkapp/hark/engine/chat"
	"github.com/harkapp/hark/engine/cpu"
	"github.com/harkapp/hark/engine/llm"
	"github.com/harkapp/hark/engine/whisper"
)

// engines is the app's model cache: at most one speech model and one chat
// model loaded, each kept between uses (dictation latency depends on not
// reloading) and unloaded after the idle time in the settings. A model is
// used by one caller at a time: its slot's mutex is held for the whole
// use, so loading another model waits for the current user to finish.
type engines struct {
	threads int

	speechMu sync.Mutex
	speech   *speechModel
	chatMu   sync.Mutex
	chat     *chatModel

	// mu guards what unloadIdle and loaded read without the slot locks.
	mu                     sync.Mutex
	idle                   func() time.Duration // 0: never unload
	speechUsed, chatUsed   time.Time
	speechName, chatName   string
	speechLoads, chatLoads int // load counts, for tests and diagnostics
}

type speechModel struct {
	path    string
	file    *whisper.File
	backend *cpu.Backend
	model   *whisper.Model
}

func (m *speechModel) close() {
	m.model.Close()
	m.file.Close()
	m.backend.Close()
}

type chatModel struct {
	path    string
	opened  *llm.Opened
	backend *cpu.Backend
	tpl     *chat.Template
	gen     *llm.Generator
}

func (m *chatModel) close() {
	m.opened.Close()
	m.backend.Close()
}

func newEngines(threads int, idle func() time.Duration) *engines {
	e := &engines{threads: threads}
	e.idle = idle
	return e
}

// speechBeams is the beam size the app decodes with (the reference's
// default for temperature 0).
const speechBeams = 5

// withSpeech runs f with the speech model at path loaded (loading it,
// and unloading another, when needed).
func (e *engines) withSpeech(path string, f func(*speechModel) error) error {
	e.speechMu.Lock()
	defer e.speechMu.Unlock()
	if e.speech != nil && e.speech.path != path {
		e.speech.close()
		e.speech = nil
	}
	if e.speech == nil {
		mf, err := whisper.OpenFile(path)
		if err != nil {
			return err
		}
		be := cpu.New(cpu.Options{Threads: e.threads})
		m, err := mf.Load(be, whisper.Options{Beams: speechBeams})
		if err != nil {
			be.Close()
			mf.Close()
			return fmt.Errorf("loading %s: %w", path, err)
		}
		e.speech = &speechModel{path: path, file: mf, backend: be, model: m}
		e.mu.Lock()
		e.speechLoads++
		e.speechName = path
		e.mu.Unlock()
	}
	e.touch(&e.speechUsed)
	defer e.touch(&e.speechUsed)
	return f(e.speech)
}

// withChat runs f with the chat model at path loaded.
func (e *engines) withChat(path string, f func(*chatModel) error) error {
	e.chatMu.Lock()
	defer e.chatMu.Unlock()
	if e.chat != nil && e.chat.path != path {
		e.chat.close()
		e.chat = nil
	}
	if e.chat == nil {
		be := cpu.New(cpu.Options{Threads: e.threads})
		o, err := llm.OpenFile(path, be, llm.Options{})
		if err != nil {
			be.Close()
			return err
		}
		tpl, err := chat.ForModel(o.File, o.Tk)
		if err != nil {
			o.Close()
			be.Close()
			return fmt.Errorf("%s: %w", path, err)
		}
		e.chat = &chatModel{path: path, opened: o, backend: be, tpl: tpl, gen: llm.NewGenerator(o.M, o.Tk)}
		e.mu.Lock()
		e.chatLoads++
		e.chatName = path
		e.mu.Unlock()
	}
	e.touch(&e.chatUsed)
	defer e.touch(&e.chatUsed)
	return f(e.chat)
}

func (e *engines) touch(t *time.Time) {
	e.mu.Lock()
	*t = time.Now()
	e.mu.Unlock()
}

// unloadIdle unloads the models unused for longer than the idle time.
// A model in use is skipped (TryLock), never waited for.
func (e *engines) unloadIdle() {
	e.mu.Lock()
	idle := e.idle
	su, cu := e.speechUsed, e.chatUsed
	e.mu.Unlock()
	limit := idle()
	if limit <= 0 {
		return
	}
	if time.Since(su) > limit && e.speechMu.TryLock() {
		if e.speech != nil {
			e.speech.close()
			e.speech = nil
		}
		e.speechMu.Unlock()
	}
	if time.Since(cu) > limit && e.chatMu.TryLock() {
		if e.chat != nil {
			e.chat.close()
			e.chat = nil
		}
		e.chatMu.Unlock()
	}
}

// drop unloads the model at path if it is loaded (it is being removed).
func (e *engines) drop(path string) {
	e.speechMu.Lock()
	if e.speech != nil && e.speech.path == path {
		e.speech.close()
		e.speech = nil
	}
	e.speechMu.Unlock()
	e.chatMu.Lock()
	if e.chat != nil && e.chat.path == path {
		e.chat.close()
		e.chat = nil
	}
	e.chatMu.Unlock()
}

// loaded reports which models are loaded (paths, "" for none).
func (e *engines) loaded() (speech, chatPath string) {
	if e.speechMu.TryLock() {
		if e.speech != nil {
			speech = e.speech.path
		}
		e.speechMu.Unlock()
	} else {
		e.mu.Lock()
		speech = e.speechName
		e.mu.Unlock()
	}
	if e.chatMu.TryLock() {
		if e.chat != nil {
			chatPath = e.chat.path
		}
		e.chatMu.Unlock()
	} else {
		e.mu.Lock()
		chatPath = e.chatName
		e.mu.Unlock()
	}
	return speech, chatPath
}

func (e *engines) close() {
	e.speechMu.Lock()
	if e.speech != nil {
		e.speech.close()
		e.speech = nil
	}
	e.speechMu.Unlock()
	e.chatMu.Lock()
	if e.chat != nil {
		e.chat.close()
		e.chat = nil
	}
	e.chatMu.Unlock()
}
