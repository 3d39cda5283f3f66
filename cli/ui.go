package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/harkapp/hark/app"
	"github.com/harkapp/hark/app/bridge"
	"github.com/harkapp/hark/app/platform"
	"github.com/harkapp/hark/frontend"
)

// UIOptions is what `hark ui` was asked.
type UIOptions struct {
	Env
	Addr       string // a loopback address
	DataDir    string
	Assets     string // built UI folder ("" = embedded, else frontend/dist)
	AllowHosts []string
	MaxUpload  int64
	// ChatMaxTokens bounds each chat answer (app.Config.ChatMaxTokens).
	ChatMaxTokens int
	Threads       int // worker threads per loaded model (0: one per physical core)
}

// newUICmd builds the command; runF, when not nil, replaces runUIApp (tests).
func newUICmd(runF func(*UIOptions) error) *cobra.Command {
	o := &UIOptions{}
	cmd := &cobra.Command{
		Use:   "ui [--addr 127.0.0.1:0] [--data-dir DIR] [--assets DIR]",
		Short: "Run the desktop app's services and UI in a web browser",
		Long: `Run the app's services (the data folder, history, transcription, chat,
models, settings) behind the HTTP bridge and serve the UI, for a browser
instead of the desktop window. The address must be a loopback one.
--addr 127.0.0.1:0 (the default) picks a free port; "listening on
http://ADDR/?token=SECRET" is printed to stderr once requests are accepted.
Open that URL: the secret is new at every launch and the page trades it for
a cookie; requests without it, with a Host other than the listener's
(--allow-host adds names) or from another site's page are refused
(SECURITY.md).

The UI is built into "wails build" binaries; a plain "go build" serves
--assets (default frontend/dist when it exists).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := loopbackOnly(o.Addr); err != nil {
				return err
			}
			if o.ChatMaxTokens < 1 {
				return fmt.Errorf("--chat-max-tokens must be at least 1, got %d", o.ChatMaxTokens)
			}
			if o.Threads < 0 {
				return fmt.Errorf("--threads must be 0 (one per physical core) or more, got %d", o.Threads)
			}
			o.Env = envOf(cmd)
			if runF != nil {
				return runF(o)
			}
			return runUIApp(o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Addr, "addr", "127.0.0.1:0", "loopback address to listen on (HOST:PORT)")
	f.StringVar(&o.DataDir, "data-dir", "", "data folder: database, recordings, uploads (default $"+app.EnvDataDir+" or the application-support folder)")
	f.StringSliceVar(&o.AllowHosts, "allow-host", nil, "also accept this Host name (repeatable)")
	f.Int64Var(&o.MaxUpload, "max-upload", bridge.DefaultMaxUpload, "largest file the page may upload, in bytes (at most 20 uploads a minute)")
	f.StringVar(&o.Assets, "assets", "", "built UI folder (default: the UI built into the binary, else frontend/dist)")
	f.IntVar(&o.ChatMaxTokens, "chat-max-tokens", app.DefaultChatMaxTokens, "the most tokens in a chat answer")
	f.IntVar(&o.Threads, "threads", 0, "worker threads per loaded model (0: one per physical core)")
	return cmd
}

// runUIApp opens the app over o.DataDir and serves it with its UI until
// SIGINT/SIGTERM.
func runUIApp(o *UIOptions) error {
	ui, err := uiAssets(o.Assets)
	if err != nil {
		return err
	}
	modelsDir := o.ModelsDir
	b := bridge.New(bridge.Options{Assets: ui, MaxUpload: o.MaxUpload})
	// Dictation from the page records with this machine's microphone
	// (opened at the first dictation) and copies or types the text like
	// the desktop app.
	rec := app.NewCaptureRecorder(nil)
	defer rec.Close()
	a, err := app.New(app.Config{DataDir: o.DataDir, ModelsDir: modelsDir, Emitter: b,
		Recorder: rec, Output: platform.New().Output, ChatMaxTokens: o.ChatMaxTokens, Threads: o.Threads,
		MeetingCapture: platform.MeetingCapture()})
	if err != nil {
		return err
	}
	defer a.Close()
	a.SetFocus(platform.NewFocus()) // dictation modes follow the focused app
	if err := b.Attach(a); err != nil {
		return err
	}
	return serveUI(o.Env, b, o.Addr, o.AllowHosts)
}

// uiAssets picks the UI: --assets, else the embedded one, else a built
// frontend/dist in the working folder (running from the repository).
func uiAssets(dir string) (fs.FS, error) {
	if dir != "" {
		return frontend.Assets(dir)
	}
	if ui, err := frontend.Assets(""); err == nil {
		return ui, nil
	}
	return frontend.Assets(filepath.Join("frontend", "dist"))
}

// loopbackOnly refuses addresses other machines could reach: the bridge
// drives the whole app without authentication.
func loopbackOnly(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--addr %q: the UI listens on loopback addresses only (127.0.0.1, ::1, localhost)", addr)
}

// serveUI serves b on addr until SIGINT/SIGTERM, then shuts down cleanly
// (open event streams end; the deferred app.Close stops jobs and saves).
func serveUI(e Env, b *bridge.Bridge, addr string, allowHosts []string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv, url, err := b.TCP(ln, allowHosts)
	if err != nil {
		ln.Close()
		return err
	}
	ctx, stop := signal.NotifyContext(e.Ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Fprintf(e.ErrOut, "listening on %s\n", url)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	b.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}
