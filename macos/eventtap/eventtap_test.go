package eventtap

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/harkapp/hark/app/trigger"
	"github.com/stretchr/testify/require"
)

var streamKeys = map[string]struct {
	tap Key
	key trigger.Key
}{
	"rightoption":  {RightOption, trigger.RightAlt},
	"rightcommand": {RightCommand, trigger.RightSuper},
	"fn":           {Fn, trigger.Fn},
	"mouseback":    {MouseBack, trigger.Mouse8},
}

var streamTypes = map[string]uint32{
	"flags": TypeFlagsChanged, "keydown": TypeKeyDown, "keyrepeat": TypeKeyDown, "keyup": TypeKeyUp, "leftdown": TypeLeftMouseDown,
	"otherdown": TypeOtherMouseDown, "otherup": TypeOtherMouseUp, "scroll": TypeScrollWheel,
}

// Recorded macOS event streams (testdata/*.txt: Quartz event type,
// keycode or button, flags), decoded as the tap decodes them and run
// through the trigger machine.
func TestRecordedMacStreams(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			var tap Key
			var key trigger.Key
			var cfg trigger.Config
			var ins []trigger.Input
			var want []string
			prev := time.Duration(-1)
			sc := bufio.NewScanner(strings.NewReader(string(b)))
			for sc.Scan() {
				w := strings.Fields(sc.Text())
				if len(w) == 0 || strings.HasPrefix(w[0], "#") {
					continue
				}
				switch w[0] {
				case "key":
					k, ok := streamKeys[w[1]]
					require.True(t, ok, w[1])
					tap, key = k.tap, k.key
				case "mode":
					cfg.Mode = w[1]
				case "doubletap":
					cfg.DoubleTap = w[1] == "on"
				case "want":
					want = append(want, strings.Join(w[1:], " "))
				default:
					require.Len(t, w, 4, sc.Text())
					ms, err := strconv.Atoi(w[0])
					require.NoError(t, err)
					at := time.Duration(ms) * time.Millisecond
					require.Greater(t, at, prev, "times increase")
					prev = at
					typ, ok := streamTypes[w[1]]
					require.True(t, ok, w[1])
					code, err := strconv.ParseInt(w[2], 10, 64)
					require.NoError(t, err)
					flags, err := strconv.ParseUint(w[3], 0, 64)
					require.NoError(t, err)
					e := Event{Type: typ, Keycode: code, Flags: flags, Button: code}
					e.Repeat = w[1] == "keyrepeat"
					switch Decode(tap, e) {
					case KeyDown:
						ins = append(ins, trigger.Input{At: at, Key: key, Down: true})
					case KeyUp:
						ins = append(ins, trigger.Input{At: at, Key: key})
					case OtherDown:
						ins = append(ins, trigger.Input{At: at, Down: true})
					}
				}
			}
			m, err := trigger.New(key, cfg)
			require.NoError(t, err)
			var got []string
			for _, a := range trigger.Replay(m, ins) {
				got = append(got, fmt.Sprintf("%d %s", a.At.Milliseconds(), a.Action))
			}
			if len(want) == 0 {
				require.Empty(t, got)
				return
			}
			require.Equal(t, want, got)
		})
	}
}

func TestDecode(t *testing.T) {
	for _, c := range []struct {
		k    Key
		e    Event
		want Result
	}{
		{RightOption, Event{Type: TypeFlagsChanged, Keycode: 61, Flags: 0x80140}, KeyDown},
		{RightOption, Event{Type: TypeFlagsChanged, Keycode: 61, Flags: 0x80120}, KeyUp}, // left still held
		{RightOption, Event{Type: TypeFlagsChanged, Keycode: 58, Flags: 0x80160}, OtherDown},
		{Fn, Event{Type: TypeFlagsChanged, Keycode: 63, Flags: 0x800100}, KeyDown},
		{Fn, Event{Type: TypeKeyDown, Keycode: 123, Flags: 0xa00100}, OtherDown},
		{Fn, Event{Type: TypeKeyDown, Keycode: 0, Repeat: true}, Ignore},
		{Fn, Event{Type: TypeKeyUp, Keycode: 0}, Ignore},
		{MouseForward, Event{Type: TypeOtherMouseDown, Button: 4}, KeyDown},
		{MouseForward, Event{Type: TypeOtherMouseUp, Button: 4}, KeyUp},
		{MouseForward, Event{Type: TypeOtherMouseDown, Button: 2}, OtherDown},
		{MouseForward, Event{Type: TypeOtherMouseUp, Button: 2}, Ignore},
		{MouseForward, Event{Type: TypeFlagsChanged, Keycode: 61, Flags: 0x80140}, OtherDown},
		{RightCommand, Event{Type: TypeScrollWheel}, OtherDown},
	} {
		require.Equal(t, c.want, Decode(c.k, c.e), "%+v %+v", c.k, c.e)
	}
	require.NotZero(t, Mask()&(1<<TypeFlagsChanged))
}
