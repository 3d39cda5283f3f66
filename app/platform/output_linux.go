package platform

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// linuxOutput inserts text with the desktop's command-line tools: the
// clipboard through wl-copy/wl-paste (Wayland), xclip or xsel (X11), and
// keystrokes through xdotool (X11 and XWayland apps).
type linuxOutput struct {
	mu      sync.Mutex
	restore *time.Timer
	prev    string // clipboard to put back
	ours    string // what we put there (not restored over a newer copy)
	// RestoreDelay is how long the target app has to read the pasted
	// clipboard before the old content comes back.
	restoreDelay time.Duration
}

func newOutput() *linuxOutput { return &linuxOutput{restoreDelay: 400 * time.Millisecond} }

// ErrNoClipboardTool and ErrNoXdotool explain what to install.
var (
	ErrNoClipboardTool = errors.New("no clipboard tool found: install xclip or xsel (X11) or wl-clipboard (Wayland)")
	ErrNoXdotool       = errors.New("xdotool is not installed: the text was copied to the clipboard; install xdotool to have it pasted or typed")
)

const toolTimeout = 3 * time.Second

func have(bin string) bool { _, err := exec.LookPath(bin); return err == nil }

func wayland() bool { return os.Getenv("WAYLAND_DISPLAY") != "" }

// setClipboard owns the clipboard with text. xclip and xsel fork a
// process that serves the selection until someone else takes it, so no
// pipe may stay attached (Wait would wait for that process).
func setClipboard(text string) error {
	var cmd *exec.Cmd
	switch {
	case wayland() && have("wl-copy"):
		cmd = exec.Command("wl-copy", "--type", "text/plain;charset=utf-8")
	case os.Getenv("DISPLAY") != "" && have("xclip"):
		cmd = exec.Command("xclip", "-selection", "clipboard", "-in")
	case os.Getenv("DISPLAY") != "" && have("xsel"):
		cmd = exec.Command("xsel", "--clipboard", "--input")
	case os.Getenv("DISPLAY") == "" && !wayland():
		return errors.New("clipboard: no display (neither DISPLAY nor WAYLAND_DISPLAY is set)")
	default:
		return ErrNoClipboardTool
	}
	cmd.Stdin = strings.NewReader(text)
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("clipboard: %w", err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("clipboard: %s: %w", cmd.Path, err)
		}
		return nil
	case <-time.After(toolTimeout):
		_ = cmd.Process.Kill()
		return fmt.Errorf("clipboard: %s timed out", cmd.Path)
	}
}

// getClipboard reads the clipboard's text ("" when it is empty or holds
// no text).
func getClipboard() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	defer cancel()
	var cmd *exec.Cmd
	switch {
	case wayland() && have("wl-paste"):
		cmd = exec.CommandContext(ctx, "wl-paste", "--no-newline", "--type", "text")
	case os.Getenv("DISPLAY") != "" && have("xclip"):
		cmd = exec.CommandContext(ctx, "xclip", "-selection", "clipboard", "-out")
	case os.Getenv("DISPLAY") != "" && have("xsel"):
		cmd = exec.CommandContext(ctx, "xsel", "--clipboard", "--output")
	default:
		return "", ErrNoClipboardTool
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", errors.New("clipboard: reading timed out")
		}
		return "", nil // no owner or no text target: nothing to keep
	}
	return out.String(), nil
}

func xdotool(args ...string) error {
	if !have("xdotool") {
		return ErrNoXdotool
	}
	if os.Getenv("DISPLAY") == "" {
		return errors.New("xdotool needs an X11 display (DISPLAY is not set)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "xdotool", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("xdotool %s: %v: %s", args[0], err, bytes.TrimSpace(out))
	}
	return nil
}

// Insert puts text into the focused app: "copy" only sets the clipboard;
// "paste" sets it and presses Ctrl+V (then, with restoreClipboard, puts
// the old text back once the app has read it); "type" types it.
func (o *linuxOutput) Insert(text, mode string, restoreClipboard bool) error {
	switch mode {
	case ModeCopy:
		o.Flush()
		return setClipboard(text)
	case ModeType:
		// --clearmodifiers: the hotkey's modifiers may still be held.
		return xdotool("type", "--clearmodifiers", "--delay", "2", "--", text)
	case ModePaste:
	default:
		return fmt.Errorf("output: unknown mode %q (want paste, copy or type)", mode)
	}
	o.Flush() // a pending restore first, so prev is the user's text
	prev := ""
	if restoreClipboard {
		p, err := getClipboard()
		if err != nil {
			return err
		}
		prev = p
	}
	if err := setClipboard(text); err != nil {
		return err
	}
	if err := xdotool("key", "--clearmodifiers", "ctrl+v"); err != nil {
		return err
	}
	if restoreClipboard && prev != "" {
		o.mu.Lock()
		o.prev, o.ours = prev, text
		o.restore = time.AfterFunc(o.restoreDelay, func() { _ = o.Flush() })
		o.mu.Unlock()
	}
	return nil
}

// Flush puts back a clipboard waiting to be restored, now (before quitting
// or the next insert). It leaves the clipboard alone if the user copied
// something else meanwhile.
func (o *linuxOutput) Flush() error {
	o.mu.Lock()
	t, prev, ours := o.restore, o.prev, o.ours
	o.restore, o.prev, o.ours = nil, "", ""
	o.mu.Unlock()
	if t == nil {
		return nil
	}
	t.Stop()
	if cur, err := getClipboard(); err != nil || cur != ours {
		return err
	}
	return setClipboard(prev)
}
