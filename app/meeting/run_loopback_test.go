//go:build cgo && linux

package meeting

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/audio/capture/pulsetest"
	am "github.com/harkapp/hark/audio/meeting"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/channels"
	"github.com/harkapp/hark/internal/shared"
	sk "github.com/harkapp/hark/internal/speechkit"
	"github.com/harkapp/hark/internal/testaudio"
)

// runClips are the kit clips the run plays with HARK_MEETING_SPEECH=kit,
// in turn on each side: turns of 2 to 5.5 s, as in a conversation (the
// kit model recognizes each from its onset).
var runClips = []string{
	"librivox-sense-and-sensibility-0930", "librivox-sense-and-sensibility-0880", "ljspeech-LJ001-0004",
	"librispeech-1089-134691-0001", "ljspeech-LJ001-0011", "librivox-sense-and-sensibility-0890",
	"ljspeech-LJ001-0016", "librispeech-1089-134686-0001", "ljspeech-LJ001-0020", "ljspeech-LJ001-0002",
	"librispeech-1089-134691-0000", "ljspeech-LJ001-0013", "ljspeech-LJ001-0008",
}

// runKit reports whether the run plays the kit clips to the kit model
// (HARK_MEETING_SPEECH=kit) rather than issue 39's evaluation sentences to
// the speechkit model, which recognizes speech it never heard (the
// default: the lag and attribution targets want such a model).
func runKit(t *testing.T) bool {
	switch v := os.Getenv("HARK_MEETING_SPEECH"); v {
	case "":
		return false
	case "kit":
		return true
	default:
		t.Fatalf("HARK_MEETING_SPEECH=%q: empty (the speechkit sentences) or kit", v)
		return false
	}
}

// runTurns writes the audio files the run plays in turn, into dir: the
// kit clips, or the 200 evaluation sentences (1.2 to 7 s, in several
// voices, one held out of training) at a speaking level.
func runTurns(t *testing.T, dir string) []string {
	var turns []string
	if runKit(t) {
		for _, c := range runClips {
			turns = append(turns, shared.Path(t, "audio", c+".wav"))
		}
		return turns
	}
	ev, x := sk.LoadSet(t)
	for _, s := range ev.Sentences {
		p := filepath.Join(dir, s.ID+".wav")
		w, err := audio.CreateWAV(p, audio.WhisperRate)
		require.NoError(t, err)
		require.NoError(t, w.Write(sk.Speaking(s.Clip(x))))
		require.NoError(t, w.Close())
		turns = append(turns, p)
	}
	return turns
}

// runLength is the meeting's length: HARK_MEETING_MINUTES (the issue's
// benchmark: 60), else 3 (CI). The run plays clips until it.
func runLength(t *testing.T) time.Duration {
	v := os.Getenv("HARK_MEETING_MINUTES")
	if v == "" {
		return 3 * time.Minute
	}
	m, err := strconv.ParseFloat(v, 64)
	require.NoError(t, err, "HARK_MEETING_MINUTES")
	// The first half must run past the first minute: the memory check
	// compares what comes after it.
	require.GreaterOrEqual(t, m, 3.0, "HARK_MEETING_MINUTES")
	return time.Duration(m * float64(time.Minute))
}

// runTranscriber is the model the run transcribes with, and how it
// streams: the Whisper file HARK_MEETING_MODEL, else the kit model
// (HARK_MEETING_SPEECH=kit: one thread, no prompts, as it was trained) or
// the speechkit model (a pool sized to the cores, the app's stream
// defaults).
func runTranscriber(t *testing.T) (whisper.WindowTranscriber, whisper.StreamConfig) {
	kit := runKit(t)
	cfg := whisper.StreamConfig{NoPrompt: kit}
	switch path := os.Getenv("HARK_MEETING_MODEL"); {
	case path != "":
		return whisper.NewStreamModel(testaudio.Model(t, path)), cfg
	case kit:
		return kitTranscriber(t), cfg
	}
	return whisper.NewStreamModel(sk.Load(t, 0)), cfg
}

// TestMeetingRun is the meeting benchmark, at CI scale by default:
// a meeting of runLength (3 minutes; HARK_MEETING_MINUTES=60 for the
// issue's) through the loopback harness (PulseAudio null sinks), the
// call's clips into the default output and the user's into the
// microphone's sink (runTurns), by turns with a 1-s pause and, every fourth turn,
// talking over each other; recorded with the live transcript
// (runTranscriber) by a child process. The child is killed with SIGKILL at
// half the length; the meeting is then made whole and offered as the app
// does at its next start (Interrupt), and resumed by a second child
// (SessionConfig.Resume, the offer's Resume recording) that is killed at
// the end. It checks the properties:
//   - memory: the children's live heap (collected every 10 s) grows by at
//     most 16 MB after the meeting's first minute (the recording streams to
//     disk; the words kept are a few KB), beside what the live
//     transcript's backlog may take on a machine too slow for it, bounded
//     by MaxLiveLag (two buffers of a minute of both channels: 15.4 MB,
//     19.2 MB as append grows them); their RSS peaks under 400 MB;
//   - live lag: the median word is committed at most 3 s (the issue's
//     target; 4 s with the kit, which waits for a clip's end) after its
//     end, in the audio the live transcriber had taken in (the design's
//     lag, not this machine's speed: how far behind the recording it ran
//     on this machine is logged, and beyond a minute behind it drops audio
//     from the live transcript only);
//   - attribution: of the words said while only one side speaks (from the
//     recording's own channels), at least 95% carry that side;
//   - kill -9: at each kill, the recovered recording loses at most 2 s of
//     what the child had captured.
func TestMeetingRun(t *testing.T) {
	if root := os.Getenv("HARK_MEETING_RUN_CHILD"); root != "" {
		runMeetingChild(t, root, os.Getenv("HARK_MEETING_RUN_RESUME"))
		return
	}
	length := runLength(t)
	half := length / 2
	pa := pulsetest.Start(t)
	pa.AddMic(t)
	root := t.TempDir()
	t.Logf("a %v meeting (kit %v, model %q), killed at %v and at the end", length, runKit(t), os.Getenv("HARK_MEETING_MODEL"), half)
	talk := &runTalk{pa: pa, turns: runTurns(t, t.TempDir())}

	// The first half, killed as a crash would.
	first := startRunChild(t, root, "")
	talk.until(t, half)
	last := first.kill(t)
	// The app's next start: the meeting is made whole and offered.
	un, err := Unfinished(root)
	require.NoError(t, err)
	require.Len(t, un, 1)
	m, err := Interrupt(root, un[0].ID)
	require.NoError(t, err)
	kept := int64(math.Round(m.Duration * rate)) // the frames its file holds (not read: 30 minutes in the benchmark)
	t.Logf("kill -9 at %v: the child captured %d frames, wrote %d; recovered %d (%.1f s)", half, last.captured, last.written, kept, m.Duration)
	require.GreaterOrEqual(t, kept, last.captured-2*rate, "kill -9 at %v: more than 2 s of captured audio lost", half)

	// The second half: the offer's Resume recording, killed at the end.
	second := startRunChild(t, root, m.ID)
	talk.until(t, length-half)
	last = second.kill(t)
	m, err = Finish(root, m.ID)
	require.NoError(t, err)
	got := loadFrames(t, Dir(root, m.ID))
	n := int64(len(got) / am.Channels)
	t.Logf("kill -9 at the end: the resumed child captured %d frames, wrote %d (with the %d kept); recovered %d (%.1f s)",
		last.captured, last.written, kept, n, m.Duration)
	require.GreaterOrEqual(t, n-kept, last.captured-2*rate, "kill -9 at the end: more than 2 s of captured audio lost")
	stats := append(first.stats, second.stats...)
	words := append(first.words, second.words...)

	// Memory: the live heap (after a collection, every 10 s) flat after
	// the first minute, and the peak RSS within the 400 MB.
	var atMinute, after, peak int64
	var heap []string
	for _, s := range stats {
		peak = max(peak, s.rssKB)
		if s.heapKB == 0 {
			continue
		}
		heap = append(heap, fmt.Sprintf("%.0fs %dMB", float64(s.written)/rate, s.heapKB>>10))
		if s.written <= 60*rate {
			atMinute = s.heapKB
		} else {
			after = max(after, s.heapKB)
		}
	}
	t.Logf("peak RSS %d MB (target 400); live heap every 10 s: %s", peak>>10, strings.Join(heap, ", "))
	require.NotZero(t, after, "the run lasted past a minute")
	// The backlog's two buffers (the one filling, the one transcribed) at a
	// minute of both channels each, up to a quarter more as append grows
	// them: they grow only while the transcriber falls behind.
	backlogKB := int64(2 * 5 / 4.0 * time.Minute.Seconds() * rate * am.Channels * 4 / 1024)
	require.LessOrEqual(t, after, atMinute+backlogKB+16<<10, "the live heap grew after the first minute")
	require.LessOrEqual(t, peak, int64(400<<10), "peak RSS")

	// Live lag and attribution.
	require.NotEmpty(t, words)
	var lags, behind []float64
	for _, w := range words {
		lags = append(lags, w.heard-w.end)
		behind = append(behind, w.recorded-w.end)
	}
	sort.Float64s(lags)
	sort.Float64s(behind)
	act := activity(got)
	right, single := 0, 0
	for _, w := range words {
		if sp, ok := act.only(w.start, w.end); ok {
			single++
			if sp == w.speaker {
				right++
			}
		}
	}
	t.Logf("%d words; live lag median %.2f s (max %.2f s; target 3 s) of the audio the transcriber had taken in, %.2f s (max %.2f s) of the audio "+
		"recorded on this machine; %d of %d single-speaker words attributed right (%.1f%%; target 95%%)",
		len(words), lags[len(lags)/2], lags[len(lags)-1], behind[len(behind)/2], behind[len(behind)-1], right, single,
		100*float64(right)/float64(max(single, 1)))
	require.GreaterOrEqual(t, single, 10, "too few words said by one side alone to judge")
	require.GreaterOrEqual(t, float64(right)/float64(single), 0.95, "attribution")
	// The 3 s. Whole segments are committed once the model has
	// closed them (StreamConfig.Words off), so a turn's first words wait
	// for its end: the kit, which completes a clip only once it has heard
	// it all, measured 3.4 s here, 2.0 and 2.2 s in two runs of the
	// kill-and-resume form (BENCHMARKS.md), and keeps a 4-s bound.
	bound := 3.0
	if runKit(t) {
		bound = 4.0
	}
	require.LessOrEqual(t, lags[len(lags)/2], bound, "median live lag")
}

// runTalk is the meeting's conversation: the files turns by turns, every
// fourth over the one before; turn counts the turns taken, so that the
// resumed meeting goes on with the next.
type runTalk struct {
	pa    *pulsetest.Server
	turns []string
	turn  int
}

// until talks for d, ending with 10 s of silence (the live transcript
// commits the last turn).
func (c *runTalk) until(t *testing.T, d time.Duration) {
	begin := time.Now()
	var playing []*exec.Cmd
	for ; time.Since(begin) < d-10*time.Second; c.turn++ {
		sink := ""
		if c.turn%2 == 1 {
			sink = pulsetest.MicSink
		}
		p := c.pa.Play(t, c.turns[c.turn%len(c.turns)], sink)
		if c.turn%4 == 2 {
			time.Sleep(time.Second) // the next clip talks over this one
			playing = append(playing, p)
			continue
		}
		require.NoError(t, p.Wait())
		for _, q := range playing {
			require.NoError(t, q.Wait())
		}
		playing = playing[:0]
		time.Sleep(time.Second)
	}
	for _, q := range playing {
		require.NoError(t, q.Wait())
	}
	for time.Since(begin) < d {
		time.Sleep(100 * time.Millisecond)
	}
}

// runChild is a child process recording the meeting (runMeetingChild),
// and what it printed.
type runChild struct {
	cmd   *exec.Cmd
	read  chan struct{}
	mu    sync.Mutex
	words []runWord
	stats []runStat
}

// startRunChild starts a child recording a new meeting under root, or
// resuming the meeting resume, and returns once it records.
func startRunChild(t *testing.T, root, resume string) *runChild {
	cmd := exec.Command(os.Args[0], "-test.run=^TestMeetingRun$", "-test.timeout=0")
	cmd.Env = append(os.Environ(), "HARK_MEETING_RUN_CHILD="+root, "HARK_MEETING_RUN_RESUME="+resume)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	c := &runChild{cmd: cmd, read: make(chan struct{})}
	started := make(chan struct{})
	go func() {
		defer close(c.read)
		sc := bufio.NewScanner(out)
		once := sync.Once{}
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			c.mu.Lock()
			switch {
			case len(f) == 6 && f[0] == "w":
				c.words = append(c.words, runWord{speaker: atoi(f[1]), start: atof(f[2]), end: atof(f[3]), heard: atof(f[4]), recorded: atof(f[5])})
			case len(f) == 5 && f[0] == "s":
				c.stats = append(c.stats, runStat{captured: int64(atoi(f[1])), written: int64(atoi(f[2])), rssKB: int64(atoi(f[3])),
					heapKB: int64(atoi(f[4]))})
				once.Do(func() { close(started) })
			default:
				t.Logf("child: %s", sc.Text())
			}
			c.mu.Unlock()
		}
	}()
	select {
	case <-started:
	case <-c.read:
		t.Fatal("the child ended before recording")
	}
	return c
}

// kill kills the child with SIGKILL and returns its last stats.
func (c *runChild) kill(t *testing.T) runStat {
	c.mu.Lock()
	last := c.stats[len(c.stats)-1]
	c.mu.Unlock()
	require.NoError(t, c.cmd.Process.Signal(syscall.SIGKILL))
	_ = c.cmd.Wait()
	<-c.read
	return last
}

type runWord struct {
	speaker                     int
	start, end, heard, recorded float64
}

type runStat struct{ captured, written, rssKB, heapKB int64 }

func atoi(s string) int { v, _ := strconv.Atoi(s); return v }

func atof(s string) float64 { v, _ := strconv.ParseFloat(s, 64); return v }

// runMeetingChild records a meeting (a new one, or the meeting resume) with
// the live transcript until killed, printing each committed word ("w speaker start end at", at: the
// recording's length when it was handed on) and, every 250 ms, the frames
// captured and written and the RSS ("s captured written rssKB").
func runMeetingChild(t *testing.T, root, resume string) {
	tr, cfg := runTranscriber(t)
	var rec atomic.Pointer[Recorder]
	var live *Live
	live = NewLive([am.Channels]whisper.WindowTranscriber{tr, tr}, LiveConfig{Stream: cfg,
		OnWords: func(ws []channels.Word) {
			at := 0.0
			if r := rec.Load(); r != nil {
				at = float64(r.Frames()) / rate
			}
			for _, w := range ws {
				fmt.Printf("w %d %.3f %.3f %.3f %.3f\n", w.Speaker, w.Start, w.End, live.Heard(), at)
			}
		}})
	s, err := StartSession(context.Background(), SessionConfig{Recorder: RecorderConfig{Root: root}, Live: live, Resume: resume})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	rec.Store(s.Recorder())
	for i := 1; ; i++ {
		live := uint64(0)
		if i%40 == 0 { // every 10 s
			live = liveHeapKB()
		}
		st := s.Stats()
		fmt.Printf("s %d %d %d %d\n", max(st[0].Received+st[0].Filled, st[1].Received+st[1].Filled), s.Recorder().Frames(), rssKB(), live)
		time.Sleep(250 * time.Millisecond)
	}
}

// liveHeapKB is the Go heap still reachable after a collection, in KB.
func liveHeapKB() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc >> 10
}

// rssKB is this process's resident set (VmRSS), in KB.
func rssKB() int64 {
	b, _ := os.ReadFile(filepath.Join("/proc", "self", "status"))
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			v, _ := strconv.ParseInt(f[1], 10, 64)
			return v
		}
	}
	return 0
}

// channelActivity is, per 20 ms of a recording, whether each channel
// holds sound (the null sinks are digital silence between clips).
type channelActivity [am.Channels][]bool

const activityStep = rate / 50

func activity(frames []float32) channelActivity {
	var a channelActivity
	n := len(frames) / am.Channels
	for ch := range am.Channels {
		for k := 0; k*activityStep < n; k++ {
			var e float64
			m := 0
			for i := k * activityStep; i < min(n, (k+1)*activityStep); i++ {
				v := float64(frames[i*am.Channels+ch])
				e += v * v
				m++
			}
			a[ch] = append(a[ch], math.Sqrt(e/float64(m)) > 1e-3)
		}
	}
	return a
}

// only reports the one side that sounds around [start, end] (with 300 ms
// either side: word times are not exact), if only one does.
func (a channelActivity) only(start, end float64) (int, bool) {
	from, to := int((start-0.3)*50), int((end+0.3)*50)
	var heard [am.Channels]bool
	for ch := range am.Channels {
		for k := max(0, from); k <= to && k < len(a[ch]); k++ {
			heard[ch] = heard[ch] || a[ch][k]
		}
	}
	switch {
	case heard[am.You] && !heard[am.Others]:
		return am.You, true
	case heard[am.Others] && !heard[am.You]:
		return am.Others, true
	}
	return 0, false
}
