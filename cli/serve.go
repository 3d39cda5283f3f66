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

func newServeCmd() *cobra.Command {
	var (
		addr, apiKey, apiKeyFile string
		cfg                      serve.Config
	)
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
so that it does not show in the process list. --addr 127.0.0.1:0 picks a
free port.

Requests must name the server as Host (127.0.0.1:PORT, localhost:PORT,
[::1]:PORT, or a name given with --allow-host), so a web page cannot reach
it by rebinding its own domain to 127.0.0.1; a server bound beyond
loopback with a key accepts any Host. Browser pages of other origins are
refused unless listed with --cors-origin (SECURITY.md).
"listening on http://ADDR" is printed to stderr once requests are accepted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, _ := cmd.Flags().GetString(modelsDirFlag)
			store, err := models.Open(dir)
			if err != nil {
				return err
			}
			if apiKeyFile != "" {
				if apiKey != "" {
					return fmt.Errorf("--api-key and --api-key-file: give one")
				}
				if apiKey, err = serve.ReadKeyFile(apiKeyFile); err != nil {
					return err
				}
			}
			if apiKey == "" {
				apiKey = os.Getenv(serve.EnvAPIKey)
			}
			cfg.Store, cfg.APIKey = store, apiKey
			if cfg.Backend, cfg.GPU, err = backendFlags(cmd); err != nil {
				return err
			}
			cfg.Log = cmd.ErrOrStderr()
			srv, err := serve.New(cfg)
			if err != nil {
				return err
			}
			defer srv.Close()
			ln, err := serve.Listen(addr, apiKey)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			fmt.Fprintf(cmd.ErrOrStderr(), "listening on http://%s\n", ln.Addr())
			hs, err := serve.HTTPServer(srv, ln)
			if err != nil {
				ln.Close()
				return err
			}
			return serve.Serve(ctx, hs, ln)
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", serve.DefaultAddr, "address to listen on (HOST:PORT)")
	f.StringVar(&apiKey, "api-key", "", "require this key as a Bearer token (default $"+serve.EnvAPIKey+")")
	f.StringVar(&apiKeyFile, "api-key-file", "", "read the API key from this file (its first line)")
	f.StringSliceVar(&cfg.AllowHosts, "allow-host", nil, "also accept this Host name (e.g. host.docker.internal; repeatable)")
	f.StringSliceVar(&cfg.CORSOrigins, "cors-origin", nil, "let web pages of this origin call the API (e.g. http://localhost:3000; repeatable)")
	f.Int64Var(&cfg.MaxUpload, "max-upload", serve.DefaultMaxUpload, "largest audio upload in bytes")
	f.DurationVar(&cfg.RequestTimeout, "timeout", serve.DefaultRequestTimeout, "longest a request may take, its wait in the queue included")
	f.DurationVar(&cfg.IdleUnload, "idle-unload", serve.DefaultIdleUnload, "unload a model after this long without requests (negative: never)")
	f.IntVar(&cfg.Context, "ctx", 0, "context length cap of chat models (0: the file's, at most 4096)")
	f.IntVar(&cfg.Threads, "threads", 0, "worker threads per loaded model (0: one per physical core)")
	addBackendFlag(cmd)
	f.IntVar(&cfg.WhisperBeam, "beam", serve.DefaultWhisperBeam, "beam size for speech models (1: greedy)")
	return cmd
}
