// Package pulsetest runs a private PulseAudio server with a null sink for
// tests: whatever is played into the sink can be captured from its
// monitor, with no sound card. Note that a null sink's monitor delivers
// nothing at all (not even silence) while nothing plays into the sink, and
// a capture stream only starts receiving a second or so after playback
// begins on this machine: wait for audio, not for time. Tests fail (never skip) when the binaries
// are missing: apt-get install pulseaudio pulseaudio-utils.
package pulsetest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Server is a running private PulseAudio daemon.
type Server struct {
	Dir    string // its XDG_RUNTIME_DIR
	Socket string
	// Sink is the null sink's name; Sink+".monitor" is the default source.
	Sink string
	cmd  *exec.Cmd
	env  []string
}

// Start starts a daemon, points this process's PULSE_SERVER at it (for
// miniaudio's libpulse, through t.Setenv: tests using it cannot run in
// parallel) and stops it when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	for _, bin := range []string{"pulseaudio", "pactl", "paplay"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("pulsetest: %s not found: install the apt packages pulseaudio and pulseaudio-utils", bin)
		}
	}
	// A short directory: unix socket paths are limited to 108 bytes.
	dir, err := os.MkdirTemp("", "pa")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	s := &Server{Dir: dir, Socket: filepath.Join(dir, "native"), Sink: "vsink"}
	s.env = append(os.Environ(), "XDG_RUNTIME_DIR="+dir, "HOME="+dir, "PULSE_SERVER=unix:"+s.Socket,
		"PULSE_STATE_PATH="+dir, "PULSE_RUNTIME_PATH="+dir)
	s.cmd = exec.Command("pulseaudio", "-n", "--daemonize=no", "--exit-idle-time=-1", "--disallow-exit",
		"--use-pid-file=no", "--disable-shm=yes", "--log-target=stderr", "--log-level=error",
		"--load=module-native-protocol-unix socket="+s.Socket+" auth-anonymous=1",
		"--load=module-null-sink sink_name="+s.Sink+" rate=48000 channels=2 sink_properties=device.description="+s.Sink,
		"--load=module-always-sink")
	s.cmd.Env = s.env
	var logb strings.Builder
	s.cmd.Stdout, s.cmd.Stderr = &logb, &logb
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("pulsetest: starting pulseaudio: %v", err)
	}
	t.Cleanup(func() {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := s.Pactl("info"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pulsetest: pulseaudio did not come up: %s", logb.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := s.Pactl("set-default-source", s.Sink+".monitor"); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PULSE_SERVER", "unix:"+s.Socket)
	t.Setenv("XDG_RUNTIME_DIR", dir)
	return s
}

// Env is the environment for child processes talking to the server.
func (s *Server) Env() []string { return s.env }

// Pactl runs pactl against the server and returns its output.
func (s *Server) Pactl(args ...string) (string, error) {
	cmd := exec.Command("pactl", args...)
	cmd.Env = s.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("pactl %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// Play starts paplay on a file into the given sink ("" = the null sink)
// and returns the running command; Wait on it to know playback ended.
func (s *Server) Play(t testing.TB, file, sink string) *exec.Cmd {
	t.Helper()
	if sink == "" {
		sink = s.Sink
	}
	cmd := exec.Command("paplay", "--device="+sink, file)
	cmd.Env = s.env
	var logb strings.Builder
	cmd.Stderr = &logb
	if err := cmd.Start(); err != nil {
		t.Fatalf("pulsetest: paplay: %v", err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return cmd
}

// MicSink is the null sink that AddMic makes: what plays into it is what
// the default input records.
const MicSink = "micsink"

// AddMic adds a second null sink whose monitor becomes the default input
// (a stand-in microphone), leaving the first sink the default output: a
// meeting then records MicSink as "You" and Sink's monitor as "Others".
func (s *Server) AddMic(t testing.TB) {
	t.Helper()
	for _, args := range [][]string{
		{"load-module", "module-null-sink", "sink_name=" + MicSink, "rate=48000", "channels=1", "sink_properties=device.description=" + MicSink},
		{"set-default-source", MicSink + ".monitor"},
		{"set-default-sink", s.Sink},
	} {
		if _, err := s.Pactl(args...); err != nil {
			t.Fatal(err)
		}
	}
}
