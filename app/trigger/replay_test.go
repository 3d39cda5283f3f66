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
	key  Key
	cfg  Config
	ins  []Input
	want []string // "250 start"
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
			in := Input{At: time.Duration(ms) * time.Millisecond}
			switch {
			case w[1] == "recording" && (w[2] == "on" || w[2] == "off"):
				in.Key, in.Down = Elsewhere, w[2] == "on"
			case w[2] == "down" || w[2] == "up":
				if w[1] != "other" {
					in.Key = Key(w[1])
				}
				in.Down = w[2] == "down"
			default:
				bad()
			}
			s.ins = append(s.ins, in)
		}
	}
	require.NoError(t, sc.Err())
	return s
}

// replay runs a stream and writes its actions as "ms action".
func replay(t *testing.T, s stream) []string {
	m, err := New(s.key, s.cfg)
	require.NoError(t, err)
	var got []string
	for _, a := range Replay(m, s.ins) {
		got = append(got, fmt.Sprintf("%d %s", a.At.Milliseconds(), a.Action))
	}
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
