//go:build linux && cgo

package dictation

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/harkapp/hark/app/platform"
	"github.com/harkapp/hark/app/platform/x11test"
	"github.com/harkapp/hark/audio/capture/pulsetest"
	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
	"github.com/jezek/xgb/xtest"
	"github.com/stretchr/testify/require"
)

// writeHum writes secs of a quiet 200 Hz hum (16 kHz mono 16-bit WAV):
// something for the null sink's monitor to deliver while the benchmark
// runs (an idle monitor delivers nothing at all).
func writeHum(t testing.TB, secs int) string {
	n := secs * 16000
	b := make([]byte, 44+2*n)
	copy(b, "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(36+2*n))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint16(b[20:], 1)
	binary.LittleEndian.PutUint16(b[22:], 1)
	binary.LittleEndian.PutUint32(b[24:], 16000)
	binary.LittleEndian.PutUint32(b[28:], 32000)
	binary.LittleEndian.PutUint16(b[32:], 2)
	binary.LittleEndian.PutUint16(b[34:], 16)
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(2*n))
	for i := range n {
		v := int16(300 * math.Sin(2*math.Pi*200*float64(i)/16000))
		binary.LittleEndian.PutUint16(b[44+2*i:], uint16(v))
	}
	p := filepath.Join(t.TempDir(), "hum.wav")
	require.NoError(t, os.WriteFile(p, b, 0o644))
	return p
}

// BenchmarkHotkeyToFirstSample presses the global hotkey (XTEST, under
// Xvfb) whose down callback starts a recording from the PulseAudio null
// sink's monitor, and reports:
//   - key-ms: the key press sent (XTEST) -> down callback: X event
//     delivery to the grab;
//   - fresh-ms: Start -> first sample captured after it;
//   - preroll-ms: audio from before the hotkey the recording holds.
//
// armed keeps the device open (pre-roll: the effective latency is
// -preroll); cold opens it at the hotkey.
func BenchmarkHotkeyToFirstSample(b *testing.B) {
	pa := pulsetest.Start(b)
	x11test.StartXvfb(b)
	humFile := writeHum(b, 60)
	for _, armed := range []bool{true, false} {
		name := map[bool]string{true: "armed", false: "cold"}[armed]
		b.Run(name, func(b *testing.B) {
			d := NewRecorder(RecorderConfig{Armed: armed, PreRoll: 500 * time.Millisecond}, nil)
			if armed {
				require.NoError(b, d.Arm())
			}
			defer d.Close()
			dir := b.TempDir()
			// The hum starts after the device opens (a null sink's monitor
			// delivers nothing to a stream that connected while it was idle
			// until playback (re)starts).
			hum := pa.Play(b, humFile, "")
			defer hum.Process.Kill()
			if armed {
				t0 := time.Now()
				require.Eventually(b, func() bool { return d.Level().RMS > 0 }, 10*time.Second, time.Millisecond, "no audio")
				b.Logf("audio after %v", time.Since(t0))
			}
			kb := newFakeKeyboard(b)
			hk := platform.New().Hotkey
			started := make(chan time.Time, 1)
			require.NoError(b, hk.Register("Ctrl+Alt+D", func() {
				t := time.Now()
				if err := d.Start(filepath.Join(dir, fmt.Sprintf("rec-%d.wav", time.Now().UnixNano()))); err == nil {
					started <- t
				}
			}, nil))
			defer hk.Unregister()
			var keyTot, freshTot, preTot time.Duration
			for i := 0; i < b.N; i++ {
				time.Sleep(600 * time.Millisecond) // refill the pre-roll
				t0 := kb.press(b)
				var t1 time.Time
				select {
				case t1 = <-started:
				case <-time.After(5 * time.Second):
					b.Fatal("hotkey did not start a recording")
				}
				// Wait for captured audio, then stop.
				pre := d.Captured()
				for d.Captured() <= pre && time.Since(t1) < 5*time.Second {
					time.Sleep(5 * time.Millisecond)
				}
				kb.release(b)
				rec, err := d.Stop()
				require.NoError(b, err)
				require.NotZero(b, rec.FirstSample, "no sample after Start: %+v level %+v dur %v", rec.Device, d.Level(), rec.Duration)
				keyTot += t1.Sub(t0)
				freshTot += rec.FirstSample
				preTot += rec.PreRoll
			}
			n := float64(b.N)
			b.ReportMetric(keyTot.Seconds()*1000/n, "key-ms")
			b.ReportMetric(freshTot.Seconds()*1000/n, "fresh-ms")
			b.ReportMetric(preTot.Seconds()*1000/n, "preroll-ms")
		})
	}
}

// fakeKeyboard presses Ctrl+Alt+D through the XTEST extension, from this
// process, so the time the press was sent is known to the microsecond.
type fakeKeyboard struct {
	c              *xgb.Conn
	root           xproto.Window
	ctrl, alt, key byte
}

func newFakeKeyboard(b *testing.B) *fakeKeyboard {
	c, err := xgb.NewConn()
	require.NoError(b, err)
	b.Cleanup(c.Close)
	require.NoError(b, xtest.Init(c))
	setup := xproto.Setup(c)
	km, err := xproto.GetKeyboardMapping(c, setup.MinKeycode, byte(setup.MaxKeycode-setup.MinKeycode+1)).Reply()
	require.NoError(b, err)
	find := func(ks xproto.Keysym) byte {
		for i, s := range km.Keysyms {
			if s == ks {
				return byte(int(setup.MinKeycode) + i/int(km.KeysymsPerKeycode))
			}
		}
		b.Fatalf("no keycode for keysym %#x", ks)
		return 0
	}
	return &fakeKeyboard{c: c, root: setup.DefaultScreen(c).Root, ctrl: find(0xffe3), alt: find(0xffe9), key: find('d')}
}

func (k *fakeKeyboard) send(b *testing.B, typ, code byte) {
	require.NoError(b, xtest.FakeInputChecked(k.c, typ, code, 0, k.root, 0, 0, 0).Check())
}

// press holds the modifiers, then presses the key and returns when it was
// sent.
func (k *fakeKeyboard) press(b *testing.B) time.Time {
	k.send(b, xproto.KeyPress, k.ctrl)
	k.send(b, xproto.KeyPress, k.alt)
	t := time.Now()
	xtest.FakeInput(k.c, xproto.KeyPress, k.key, 0, k.root, 0, 0, 0)
	return t
}

func (k *fakeKeyboard) release(b *testing.B) {
	k.send(b, xproto.KeyRelease, k.key)
	k.send(b, xproto.KeyRelease, k.alt)
	k.send(b, xproto.KeyRelease, k.ctrl)
}
