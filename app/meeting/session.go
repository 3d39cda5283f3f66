package meeting

import (
	"context"
	"errors"
	"sync"
	"time"

	am "github.com/harkapp/hark/audio/meeting"
	"github.com/harkapp/hark/internal/channels"
)

// SessionConfig configures a recording meeting.
type SessionConfig struct {
	Recorder RecorderConfig
	Capture  am.CaptureConfig // OnFrames is the session's own
	// Resume, when set, is the meeting a crash cut short to go on
	// recording (Resume) instead of a new one; the live transcript's
	// times continue at its length.
	Resume string
	// Live, when set, transcribes as the meeting goes (nil: record only,
	// the transcript comes from a pass after Stop).
	Live *Live
	// MaxLiveLag bounds the audio waiting for the live transcriber (default
	// 60 s): beyond it the oldest is dropped from the live transcript only
	// (the recording keeps it, and the final pass hears it).
	MaxLiveLag time.Duration
}

// Session is a meeting being recorded: captured frames go to disk at
// once, and to the live transcriber on its own goroutine, which may fall
// behind without holding up the recording.
type Session struct {
	rec  *Recorder
	cap  *am.Capture
	live *Live

	mu      sync.Mutex
	pend    []float32
	maxPend int
	dropped int64
	ended   bool
	wake    chan struct{}
	done    chan struct{}
	words   []channels.Word
	liveErr error
}

// StartSession starts recording a meeting.
func StartSession(ctx context.Context, cfg SessionConfig) (*Session, error) {
	var rec *Recorder
	var err error
	if cfg.Resume != "" {
		rec, err = Resume(cfg.Recorder, cfg.Resume)
	} else {
		rec, err = Start(cfg.Recorder, time.Now())
	}
	if err != nil {
		return nil, err
	}
	if cfg.MaxLiveLag <= 0 {
		cfg.MaxLiveLag = time.Minute
	}
	s := &Session{rec: rec, live: cfg.Live, wake: make(chan struct{}, 1), done: make(chan struct{}),
		maxPend: int(cfg.MaxLiveLag.Seconds()*rate16k) * am.Channels}
	cc := cfg.Capture
	cc.OnFrames = s.onFrames
	if s.live != nil {
		s.live.Skip(rec.Frames()) // a resumed meeting's timeline goes on
		go s.transcribe(ctx)
	} else {
		close(s.done)
	}
	s.cap, err = am.StartCapture(cc)
	if err != nil {
		s.endLive()
		<-s.done
		state := StateFinished
		if cfg.Resume != "" {
			state = StateInterrupted // still offered
		}
		_, _ = rec.close(state)
		return nil, err
	}
	return s, nil
}

// Recorder is the session's recording.
func (s *Session) Recorder() *Recorder { return s.rec }

func (s *Session) onFrames(f []float32) {
	s.rec.Write(f)
	if s.live == nil {
		return
	}
	s.mu.Lock()
	s.pend = append(s.pend, f...)
	if over := len(s.pend) - s.maxPend; over > 0 {
		s.pend = s.pend[:copy(s.pend, s.pend[over:])]
		s.dropped += int64(over / am.Channels)
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *Session) transcribe(ctx context.Context) {
	defer close(s.done)
	var buf []float32
	for {
		select {
		case <-s.wake:
		case <-ctx.Done():
			s.liveErr = ctx.Err()
			return
		}
		s.mu.Lock()
		buf, s.pend = s.pend, buf[:0]
		ended, dropped := s.ended, s.dropped
		s.dropped = 0
		s.mu.Unlock()
		if dropped > 0 {
			s.live.Skip(dropped) // before buf: the dropped audio came first
		}
		if len(buf) > 0 {
			if err := s.live.Write(ctx, buf); err != nil {
				s.liveErr = err
				return
			}
		}
		if ended {
			s.words, s.liveErr = s.live.Finish(ctx)
			return
		}
	}
}

func (s *Session) endLive() {
	s.mu.Lock()
	s.ended = true
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Stats reports the capture's clock corrections.
func (s *Session) Stats() [am.Channels]am.TrackStats { return s.cap.Stats() }

// Stop ends the meeting: capture stops, the recording is finished, and
// the live transcript's tail is decoded. It returns the meeting and its
// words (nil without a live transcriber).
func (s *Session) Stop() (Meta, []channels.Word, error) {
	cerr := s.cap.Stop() // hands on the last frames
	m, rerr := s.rec.Stop()
	s.endLive()
	<-s.done
	return m, s.words, errors.Join(cerr, rerr, s.liveErr)
}
