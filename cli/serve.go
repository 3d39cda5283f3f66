package cli

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/harkapp/hark/engine/models"
	"github.com/harkapp/hark/serve"
)

// ServeOptions is what `hark serve` was asked.
type ServeOptions struct {
	Env
	Addr       string
	APIKey     string // --api-key, else --api-key-file's, else $HARK_API_KEY (resolved by runServe)
	APIKeyFile string
	// Config holds the server's flags (hosts, origins, limits, threads,
	// beam); runServe adds the models folder, the key and the backend.
	Config serve.Config
}

// newServeCmd builds the command; runF, when not nil, replaces runServe
// (tests).
func newServeCmd(runF func(*ServeOptions) error) *cobra.Command {
	o := &ServeOptions{}
	cmd := &cobra.Command{
		Use:   "serve [--addr HOST:PORT] [--api-key KEY]",
		Short: "Serve the models folder through a local OpenAI-compatible API",
		Long: `Serve every model of the models folder through an OpenAI-compatible HTTP API:
GET /v1/models, POST /v1/audio/transcriptions, /v1/audio/translations,
/v1/chat/completions and /v1/completions, and GET /health. Models are
loaded on first use and unloaded after --idle-unload without requests.

The server listens on 127.0.0.1 only unless --addr says otherwise; any other
address needs an API key (--api-key or $` + serve.EnvAPIKey + `), which clients
send as "Authorization: Bearer KEY"; --api-key-file FILE reads it from a file
so that it does not show in the process list (the file must be private to
you, chmod 600, as ssh requires of keys). --addr 127.0.0.1:0 picks a
free port.

Requests must name the server as Host (127.0.0.1:PORT, localhost:PORT,
[::1]:PORT, or a name given with --allow-host), so a web page cannot reach
it by rebinding its own domain to 127.0.0.1; a server bound beyond
loopback with a key accepts any Host. Browser pages of other origins are
refused unless listed with --cors-origin (SECURITY.md).
"listening on http://ADDR" is printed to stderr once requests are accepted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.APIKeyFile != "" && o.APIKey != "" {
				return fmt.Errorf("--api-key and --api-key-file: give one")
			}
			o.Env = envOf(cmd)
			if o.Config.StreamInterval == 0 {
				o.Config.StreamInterval = -1 // the flag's 0 is "none", Config's the default
			}
			if runF != nil {
				return runF(o)
			}
			return runServe(o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Addr, "addr", serve.DefaultAddr, "address to listen on (HOST:PORT)")
	f.StringVar(&o.APIKey, "api-key", "", "require this key as a Bearer token (default $"+serve.EnvAPIKey+")")
	f.StringVar(&o.APIKeyFile, "api-key-file", "", "read the API key from this file (its first line; the file must be chmod 600)")
	f.StringSliceVar(&o.Config.AllowHosts, "allow-host", nil, "also accept this Host name (e.g. host.docker.internal; repeatable)")
	f.StringSliceVar(&o.Config.CORSOrigins, "cors-origin", nil, "let web pages of this origin call the API (e.g. http://localhost:3000; repeatable)")
	f.Int64Var(&o.Config.MaxUpload, "max-upload", serve.DefaultMaxUpload, "largest audio upload in bytes")
	f.DurationVar(&o.Config.MaxAudioDuration, "max-audio-duration", serve.DefaultMaxAudioDuration, "longest audio a transcription request may hold (refused as soon as decoding passes it)")
	f.DurationVar(&o.Config.RequestTimeout, "timeout", serve.DefaultRequestTimeout, "longest a request may take, its wait in the queue included")
	f.DurationVar(&o.Config.StreamInterval, "stream-interval", serve.DefaultStreamInterval, "least time between two writes of a stream's tokens (each token stays its own event; 0: write every token at once)")
	f.DurationVar(&o.Config.IdleUnload, "idle-unload", serve.DefaultIdleUnload, "unload a model after this long without requests (negative: never)")
	f.IntVar(&o.Config.Context, "ctx", 0, "context length cap of chat models (0: the file's, at most 4096)")
	f.IntVar(&o.Config.Threads, "threads", 0, "worker threads per loaded model (0: one per physical core)")
	f.BoolVar(&o.Config.NoBatch, "no-batch", false, "answer chat and completion requests one after another instead of decoding them together (continuous batching, on the CPU backend)")
	f.BoolVar(&o.Config.BatchGPU, "batch-gpu", false, "decode concurrent requests together on a GPU backend too (CUDA): more streams at once, but a lone stream decodes slower than without it")
	addBackendFlag(cmd)
	f.IntVar(&o.Config.WhisperBeam, "beam", serve.DefaultWhisperBeam, "beam size for speech models (1: greedy)")
	return cmd
}

// runServe serves until SIGINT/SIGTERM (cmd carries the models-folder and
// backend flags, stderr and the context).
func runServe(o *ServeOptions) error {
	dir := o.ModelsDir
	store, err := models.Open(dir)
	if err != nil {
		return err
	}
	apiKey := o.APIKey
	if o.APIKeyFile != "" {
		if apiKey, err = serve.ReadKeyFile(o.APIKeyFile); err != nil {
			return err
		}
	}
	if apiKey == "" {
		apiKey = os.Getenv(serve.EnvAPIKey)
	}
	cfg := o.Config
	cfg.Store, cfg.APIKey = store, apiKey
	if cfg.Backend, cfg.GPU, err = backendFlags(o.Env); err != nil {
		return err
	}
	cfg.Log = o.ErrOut
	srv, err := serve.New(cfg)
	if err != nil {
		return err
	}
	defer srv.Close()
	ln, err := serve.Listen(o.Addr, apiKey)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(o.Ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	hs, err := serve.HTTPServer(srv, ln)
	if err != nil {
		ln.Close()
		return err
	}
	fmt.Fprintf(o.ErrOut, "listening on http://%s\n", ln.Addr())
	return serve.Serve(ctx, hs, ln)
}
