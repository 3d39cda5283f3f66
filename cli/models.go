package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/harkapp/hark/app"
	"github.com/harkapp/hark/engine/backends"
	"github.com/harkapp/hark/engine/chat"
	"github.com/harkapp/hark/engine/modelfile"
	"github.com/harkapp/hark/engine/models"
	"github.com/harkapp/hark/engine/runtime"
)

func newModelsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "models",
		Short: "List, download, import and remove models in the models folder",
	}
	cmd.AddCommand(newModelsListCmd(nil), newModelsPullCmd(nil), newModelsRmCmd(nil), newModelsImportCmd(nil), newModelsPathCmd(nil))
	return cmd
}

// ModelsOptions is what a `hark models` subcommand was asked, with its
// streams and the models folder (Env).
type ModelsOptions struct {
	Env
	Names     []string // the models named (pull, rm, path) or the file (import)
	Installed bool     // list: installed models only
	Mirror    string   // pull: base URL replacing https://huggingface.co
	// AcceptLicense (pull): the user accepts the licence of a model
	// published under one (Gemma's terms); without it such a pull is refused.
	AcceptLicense bool
	// Forget (rm): also drop the hash recorded at the first download.
	Forget bool
}

// modelsRun is a subcommand's work; tests pass their own to see the
// options a command line gives.
type modelsRun func(o *ModelsOptions) error

// modelsCmd finishes a subcommand: its arguments become o.Names and run
// (or the test's runF) does the work.
func modelsCmd(cmd *cobra.Command, o *ModelsOptions, run, runF modelsRun) *cobra.Command {
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		o.Env, o.Names = envOf(cmd), args
		if runF != nil {
			return runF(o)
		}
		return run(o)
	}
	return cmd
}

func openStore(e Env) (*models.Store, error) { return models.Open(e.ModelsDir) }

func newModelsListCmd(runF modelsRun) *cobra.Command {
	o := &ModelsOptions{}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List installed models and the catalog",
		Args:  cobra.NoArgs,
	}
	cmd.Flags().BoolVar(&o.Installed, "installed", false, "list installed models only")
	return modelsCmd(cmd, o, runModelsList, runF)
}

// runModelsList: `hark models list`.
func runModelsList(o *ModelsOptions) error {
	s, err := openStore(o.Env)
	if err != nil {
		return err
	}
	entries, err := s.List()
	if err != nil {
		return err
	}
	have := map[string]models.Entry{}
	for _, e := range entries {
		have[e.Name] = e
	}
	w := tabwriter.NewWriter(o.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tTASK\tSIZE\tSTATUS\tVERIFIED\tNOTES")
	inCatalog := map[string]bool{}
	for _, c := range models.Catalog() {
		inCatalog[c.Name] = true
		e, ok := have[c.Name]
		if o.Installed && !ok {
			continue
		}
		status, size := "available", c.Size
		if ok {
			status, size = "installed", e.Size
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", c.Name, c.Task, sizeText(size), status, verifiedText(s, c), c.Notes)
	}
	for _, e := range entries {
		if inCatalog[e.Name] {
			continue
		}
		task := "?"
		if info, err := models.Inspect(e.Path); err == nil {
			task = string(info.Task)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", e.Name, task, sizeText(e.Size), "imported", "-", e.Path)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(o.ErrOut, "models folder: %s\n", s.Dir)
	if ram := models.TotalRAM(); ram > 0 && !o.Installed {
		fmt.Fprint(o.ErrOut, adviceText(runtime.ThisMachine(backends.Auto), ram))
	}
	return nil
}

// adviceText is `models list`'s recommendation: speech models by their
// speed estimated for machine m (the app measures it once a model is
// installed) and accuracy, the chat model by memory.
func adviceText(m models.Machine, ram int64) string {
	adv := app.AdviseFor(&app.SpeedProbe{Probe: m.Estimate()}, ram)
	_, ch := models.Recommend(ram)
	var b strings.Builder
	for _, r := range []struct{ task, name, why string }{{"dictation", adv.Dictation, adv.DictWhy}, {"files", adv.Files, adv.FilesWhy}} {
		if r.name == "" {
			r.name = "none"
		}
		fmt.Fprintf(&b, "recommended for %s: %s: %s\n", r.task, r.name, r.why)
	}
	fmt.Fprintf(&b, "recommended chat model for %s of memory: %s\n", models.HumanBytes(ram), fitOrNone(ch.Name))
	return b.String()
}

func fitOrNone(s string) string {
	if s == "" {
		return "(none fits)"
	}
	return s
}

func sizeText(n int64) string {
	if n <= 0 {
		return "?"
	}
	return models.HumanBytes(n)
}

func verifiedText(s *models.Store, c models.CatalogEntry) string {
	if c.Verified() {
		return "sha256"
	}
	if _, ok := s.RecordedHash(c.Name); ok {
		return "recorded"
	}
	return "unverified"
}

func newModelsPullCmd(runF modelsRun) *cobra.Command {
	o := &ModelsOptions{}
	cmd := &cobra.Command{
		Use:   "pull NAME...",
		Short: "Download catalog models (resumes an interrupted download)",
		Args:  cobra.MinimumNArgs(1),
	}
	cmd.Flags().StringVar(&o.Mirror, "mirror", "", "base URL replacing https://huggingface.co (default $"+models.EnvMirror+")")
	cmd.Flags().BoolVar(&o.AcceptLicense, "accept-license", false, "accept the licence of models published under one (hark models list names it)")
	return modelsCmd(cmd, o, runModelsPull, runF)
}

// runModelsPull: `hark models pull`.
func runModelsPull(o *ModelsOptions) error {
	s, err := openStore(o.Env)
	if err != nil {
		return err
	}
	var reqs []models.CatalogEntry
	for _, name := range o.Names {
		c, ok := models.Lookup(name)
		if !ok {
			return fmt.Errorf("%q is not in the catalog (see hark models list)", name)
		}
		if err := c.CheckLicense(o.AcceptLicense); err != nil {
			return fmt.Errorf("%w; read it, then pull again with --accept-license", err)
		}
		reqs = append(reqs, c)
	}
	d := models.NewDownloader(1)
	if o.Mirror != "" {
		d.Mirror = o.Mirror
	}
	// Ctrl-C stops cleanly and keeps NAME.partial for the next pull.
	ctx, stop := signal.NotifyContext(o.Ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	for _, c := range reqs {
		if p, err := s.Path(c.Name); err == nil {
			fmt.Fprintf(o.ErrOut, "%s is already installed: %s\n", c.Name, p)
			continue
		}
		if err := pullOne(ctx, o.IOStreams, s, d, c); err != nil {
			if errors.Is(err, context.Canceled) {
				return fmt.Errorf("%s: download interrupted; run the same pull again to resume", c.Name)
			}
			return err
		}
	}
	return nil
}

func pullOne(ctx context.Context, st IOStreams, s *models.Store, d *models.Downloader, c models.CatalogEntry) error {
	stderr := st.ErrOut
	if !c.Verified() {
		fmt.Fprintf(stderr, "%s has no published sha256: its hash will be recorded and checked on later downloads\n", c.Name)
	}
	size := c.Size
	if size <= 0 {
		size = -1 // unknown until the server says
	}
	bar := progressbar.NewOptions64(size,
		progressbar.OptionSetWriter(stderr),
		progressbar.OptionSetDescription(c.Name),
		progressbar.OptionShowBytes(true),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(stderr) }),
	)
	p, err := d.Download(ctx, s, c.Request(), func(pr models.Progress) {
		if pr.Total > 0 && bar.GetMax64() != pr.Total {
			bar.ChangeMax64(pr.Total)
		}
		_ = bar.Set64(pr.Bytes) // the bar only draws on stderr
	})
	if err != nil {
		_ = bar.Exit()
		fmt.Fprintln(stderr)
		return err
	}
	_ = bar.Finish()
	fmt.Fprintf(stderr, "%s: %s\n", c.Name, p)
	fmt.Fprintln(st.Out, c.Name)
	return nil
}

func newModelsRmCmd(runF modelsRun) *cobra.Command {
	o := &ModelsOptions{}
	cmd := &cobra.Command{
		Use:   "rm NAME...",
		Short: "Remove models from the models folder",
		Long: `Remove models from the models folder.

The sha256 recorded at a model's first download (for catalog entries that
publish none) is kept, so pulling it again must give the same file;
--forget drops it too, and the next pull is trusted anew.`,
		Args: cobra.MinimumNArgs(1),
	}
	cmd.Flags().BoolVar(&o.Forget, "forget", false, "also forget the recorded sha256 of each model's first download")
	return modelsCmd(cmd, o, runModelsRm, runF)
}

// runModelsRm: `hark models rm`.
func runModelsRm(o *ModelsOptions) error {
	s, err := openStore(o.Env)
	if err != nil {
		return err
	}
	for _, name := range o.Names {
		err := s.Remove(name)
		switch {
		case err == nil:
			fmt.Fprintf(o.ErrOut, "removed %s\n", name)
		case !o.Forget || !errors.Is(err, models.ErrNotFound):
			return err // --forget also serves a model already removed
		}
		if o.Forget {
			if err := s.Forget(name); err != nil {
				return err
			}
			fmt.Fprintf(o.ErrOut, "forgot the recorded sha256 of %s\n", name)
		}
	}
	return nil
}

func newModelsImportCmd(runF modelsRun) *cobra.Command {
	o := &ModelsOptions{}
	cmd := &cobra.Command{
		Use:   "import FILE",
		Short: "Copy a Whisper (.bin) or GGUF model file into the models folder and print its name",
		Args:  cobra.ExactArgs(1),
	}
	return modelsCmd(cmd, o, runModelsImport, runF)
}

// runModelsImport: `hark models import`.
func runModelsImport(o *ModelsOptions) error {
	s, err := openStore(o.Env)
	if err != nil {
		return err
	}
	name, err := s.Import(o.Names[0])
	if err != nil {
		return err
	}
	fmt.Fprintln(o.Out, name)
	if err := checkChatTemplate(o.Names[0]); err != nil {
		fmt.Fprintf(o.ErrOut, "warning: %s's chat template is unusable, so chatting with it will fail (completions work; `hark chat --template FILE` gives it another): %v\n", name, err)
	}
	return nil
}

func newModelsPathCmd(runF modelsRun) *cobra.Command {
	o := &ModelsOptions{}
	cmd := &cobra.Command{
		Use:   "path [NAME]",
		Short: "Print the models folder, or the file of the model NAME",
		Args:  cobra.MaximumNArgs(1),
	}
	return modelsCmd(cmd, o, runModelsPath, runF)
}

// runModelsPath: `hark models path`.
func runModelsPath(o *ModelsOptions) error {
	s, err := openStore(o.Env)
	if err != nil {
		return err
	}
	if len(o.Names) == 0 {
		fmt.Fprintln(o.Out, s.Dir)
		return nil
	}
	p, err := s.Path(o.Names[0])
	if err != nil {
		return err
	}
	fmt.Fprintln(o.Out, p)
	return nil
}

// checkChatTemplate checks the chat template of the GGUF model at path, as
// loading it will (nil for other files and models without one).
func checkChatTemplate(path string) error {
	f, err := modelfile.Open(path)
	if err != nil {
		return nil // Import has already said what is wrong with the file
	}
	defer f.Close()
	if f.GGUF == nil {
		return nil
	}
	return chat.CheckModel(f.GGUF)
}
