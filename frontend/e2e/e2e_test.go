package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/app"
	"github.com/harkapp/hark/cli"
	"github.com/harkapp/hark/internal/shared"
)

const (
	dropClip = "ljspeech-LJ001-0008"
	pickClip = "jfk"
	kitModel = "ggml-kit-tiny.en-q8_0.bin"
	chatFile = "stories260K.gguf"
	// chatMaxTokens bounds each chat answer of the smallest model (else
	// up to its context's end): on a busy 2-core machine an unbounded one
	// took over 90 s. The first answer, stopped at its first streamed text,
	// is held there until the stop lands (app.AnswerTextHook). The models
	// run on one thread each (--threads 1): on a busy machine a worker
	// team waits at every operation's barrier for a descheduled peer, 48
	// times per token of this model.
	chatMaxTokens = 384
)

// TestBrowser drives the UI in headless Chromium against `hark ui` (run
// in-process, twice on the same data folder): drop a kit clip and get its
// target text, export SRT with the trained cue times, pick another clip,
// stream a chat answer from stories260K and stop it midway, search the
// history and replay the recording, change settings and find them kept
// after the restart. It writes a screenshot of each view to a temp folder,
// or to the tracked docs/screenshots when HARK_UPDATE_SCREENSHOTS=1 (tests
// must not rewrite tracked files); E2E_SHOTS overrides, "-" skips them.
func TestBrowser(t *testing.T) {
	root := repoRoot(t)
	fe := filepath.Join(root, "frontend")
	prepareFrontend(t, fe)

	kit := shared.Path(t, "whisper-kit")
	models := t.TempDir()
	// The models folder lists regular files only: the test models are
	// hard-linked, or copied where a link can't be made (another file
	// system), into a temp folder.
	linkOrCopy(t, filepath.Join(kit, "models", kitModel), filepath.Join(models, kitModel))
	linkOrCopy(t, shared.Path(t, "models", chatFile), filepath.Join(models, chatFile))

	drop, pick := clip(t, dropClip), clip(t, pickClip)
	tc := map[string]any{
		"dropClip": drop.wav, "dropText": drop.text, "dropDuration": drop.duration,
		"srtCue":   "00:00:00,000 --> " + srtTime(drop.endMs),
		"pickClip": pick.wav, "pickText": pick.text,
		"chatModel":     strings.TrimSuffix(chatFile, ".gguf"),
		"retentionDays": 30, "hotkey": "Ctrl+Shift+H",
	}
	caseJSON, err := json.Marshal(tc)
	require.NoError(t, err)

	// The first answer is held after its first streamed text until the
	// page's Stop cancels it, so the stop never races the model's end.
	var held atomic.Bool
	app.AnswerTextHook = func(ctx context.Context) {
		if held.CompareAndSwap(false, true) {
			<-ctx.Done()
		}
	}
	t.Cleanup(func() { app.AnswerTextHook = nil })

	shots := screenshotDir(t, root)
	data := t.TempDir()
	out := scratchDir(t) // the export, and failure.png
	for _, phase := range []string{"1", "2"} {
		url, stop := startUI(t, models, data, filepath.Join(fe, "dist"))
		_, err := browserScript(t, fe, "run.mjs", append(os.Environ(), "HARK_URL="+url, "E2E_PHASE="+phase,
			"E2E_CASE="+string(caseJSON), "E2E_SHOTS="+shots), out, "failure.png")
		require.NoError(t, err, "browser phase %s", phase)
		stop()
	}
}

// kitClip is one clip of the whisper kit with what the model was trained
// to emit for it.
type kitClip struct {
	wav, text string
	endMs     int64
	duration  float64
}

func clip(t *testing.T, name string) kitClip {
	var ref struct {
		Text string `json:"text"`
	}
	readJSON(t, shared.Path(t, "whisper-kit", "reference", "transcribe", name+".json"), &ref)
	var targets struct {
		Clips map[string]struct {
			EndTimestampIndex int     `json:"end_timestamp_index"`
			Duration          float64 `json:"duration"`
		} `json:"clips"`
	}
	readJSON(t, shared.Path(t, "whisper-kit", "targets.json"), &targets)
	c, ok := targets.Clips[name]
	require.True(t, ok, "clip %s not in targets.json", name)
	return kitClip{
		wav:      shared.Path(t, "audio", name+".wav"),
		text:     strings.TrimSpace(ref.Text),
		endMs:    int64(c.EndTimestampIndex) * 20, // timestamp tokens are 20 ms apart
		duration: c.Duration,
	}
}

func srtTime(ms int64) string {
	return fmt.Sprintf("%02d:%02d:%02d,%03d", ms/3600000, ms/60000%60, ms/1000%60, ms%1000)
}

// startUI runs `hark ui` in-process and returns its URL and a function
// that stops it as SIGINT would, checking it exits cleanly.
func startUI(t *testing.T, models, data, assets string) (string, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	root := cli.NewRoot(io.Discard, pw)
	root.SetArgs([]string{"ui", "--addr", "127.0.0.1:0", "--models-dir", models, "--data-dir", data, "--assets", assets,
		"--chat-max-tokens", strconv.Itoa(chatMaxTokens), "--threads", "1"})
	done := make(chan error, 1)
	go func() {
		err := root.ExecuteContext(ctx)
		pw.Close()
		done <- err
	}()
	urls := make(chan string, 1)
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(pr)
		re := regexp.MustCompile(`listening on (http://\S+)`)
		for sc.Scan() {
			t.Log("hark ui:", sc.Text())
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
	}()
	var url string
	select {
	case url = <-urls:
	case err := <-done:
		t.Fatalf("hark ui exited: %v", err)
	case <-time.After(shared.Wait(t, 60*time.Second)):
		t.Fatal("hark ui did not start listening")
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			<-scanned
			require.NoError(t, err, "hark ui exit")
		case <-time.After(shared.Wait(t, 30*time.Second)):
			t.Fatal("hark ui did not stop")
		}
	}
	t.Cleanup(stop)
	return url, stop
}

// prepareFrontend installs the pinned npm packages and builds the UI when
// the build is missing or older than its sources.
func prepareFrontend(t *testing.T, fe string) {
	if _, err := os.Stat(filepath.Join(fe, "node_modules", "playwright-core", "package.json")); err != nil {
		run(t, fe, "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	}
	built, err := os.Stat(filepath.Join(fe, "dist", "index.html"))
	if err == nil && !newerThan(t, fe, built.ModTime()) {
		return
	}
	run(t, fe, "npm", "run", "build")
}

func newerThan(t *testing.T, fe string, when time.Time) bool {
	newer := false
	for _, p := range []string{"src", "index.html", "package-lock.json", "vite.config.ts"} {
		err := filepath.Walk(filepath.Join(fe, p), func(_ string, fi os.FileInfo, err error) error {
			if err == nil && fi.ModTime().After(when) {
				newer = true
			}
			return err
		})
		require.NoError(t, err)
	}
	return newer
}

func run(t *testing.T, dir, name string, args ...string) {
	start := time.Now()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %v:\n%s", name, args, out)
	t.Logf("%s %s: %.1f s", name, strings.Join(args, " "), time.Since(start).Seconds())
}

func repoRoot(t *testing.T) string {
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, parent, dir, "no go.mod above the test")
		dir = parent
	}
}

func linkOrCopy(t *testing.T, from, to string) {
	if os.Link(from, to) == nil {
		return
	}
	src, err := os.Open(from)
	require.NoError(t, err)
	defer src.Close()
	dst, err := os.Create(to)
	require.NoError(t, err)
	_, err = io.Copy(dst, src)
	require.NoError(t, err)
	require.NoError(t, dst.Close())
}

func readJSON(t *testing.T, path string, v any) {
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, v))
}

// screenshotDir is where a browser test writes its screenshots: a temp
// folder, or the tracked docs/screenshots when HARK_UPDATE_SCREENSHOTS=1
// (tests must not rewrite tracked files); E2E_SHOTS overrides, and "-"
// (returned as "") skips them.
func screenshotDir(t *testing.T, root string) string {
	shots := os.Getenv("E2E_SHOTS")
	switch shots {
	case "":
		shots = t.TempDir()
		if os.Getenv("HARK_UPDATE_SCREENSHOTS") == "1" {
			shots = filepath.Join(root, "docs", "screenshots")
		}
	case "-":
		return ""
	}
	require.NoError(t, os.MkdirAll(shots, 0o755))
	return shots
}
