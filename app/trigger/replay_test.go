package trigger

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// stream is a recorded event stream (testdata/*.txt): the trigger's
// settings, timestamped inputs, and the actions expected, with the time
// each falls due.
type stream struct {
	key    Key
	cfg    Config
	events []streamEvent
	want   []string // "250 start"
}

type streamEvent struct {
	in        Input
	recording *bool // a "recording on|off" line: dictation changed elsewhere
}

func readStream(t *testing.T, path string) stream {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var s stream
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		w := strings.Fields(line)
		bad := func() { t.Fatalf("%s:%d: bad line %q", path, n, line) }
		if len(w) < 2 {
			bad()
		}
		switch w[0] {
		case "key":
			k, err := ParseKey(w[1])
			require.NoError(t, err)
			s.key = k
		case "mode":
			s.cfg.Mode = w[1]
		case "doubletap":
			s.cfg.DoubleTap = w[1] == "on"
		case "want":
			s.want = append(s.want, strings.Join(w[1:], " "))
		default:
			ms, err := strconv.Atoi(w[0])
			if err != nil || len(w) != 3 {
				bad()
			}
			at := time.Duration(ms) * time.Millisecond
			switch {
			case w[1] == "recording":
				on := w[2] == "on"
				s.events = append(s.events, streamEvent{in: Input{At: at}, recording: &on})
			case w[2] == "down" || w[2] == "up":
				k := Key("")
				if w[1] != "other" {
					k = Key(w[1])
				}
				s.events = append(s.events, streamEvent{in: Input{At: at, Key: k, Down: w[2] == "down"}})
			default:
				bad()
			}
		}
	}
	require.NoError(t, sc.Err())
	return s
}

// replay feeds a stream to a fresh machine the way Runner does (Sync
// before each step, timers fired at their deadline) and returns the
// actions with the times they were taken.
func replay(t *testing.T, s stream) []string {
	m, err := New(s.key, s.cfg)
	require.NoError(t, err)
	var got []string
	recording := false
	take := func(at time.Duration, acts []Action) {
		for _, a := range acts {
			got = append(got, fmt.Sprintf("%d %s", at.Milliseconds(), a))
			recording = a == Start
		}
	}
	advance := func(to time.Duration) {
		for {
			at, ok := m.Deadline()
			if !ok || at > to {
				return
			}
			m.Sync(recording)
			take(at, m.Advance(at))
		}
	}
	for _, e := range s.events {
		advance(e.in.At)
		if e.recording != nil {
			recording = *e.recording
			continue
		}
		m.Sync(recording)
		take(e.in.At, m.Step(e.in))
	}
	advance(time.Hour)
	return got
}

func TestRecordedStreams(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			s := readStream(t, f)
			got := replay(t, s)
			if len(s.want) == 0 {
				require.Empty(t, got, "nothing should have fired")
				return
			}
			require.Equal(t, s.want, got)
		})
	}
}
