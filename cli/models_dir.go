package cli

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/spf13/cobra"

	"github.com/harkapp/hark/engine/models"
)

// modelsDirFlag is the root's persistent --models-dir (HARK_MODELS or the
// application-support folder when empty).
const modelsDirFlag = "models-dir"

func addModelsDirFlag(root *cobra.Command) {
	root.PersistentFlags().String(modelsDirFlag, "", "models folder (default $"+models.EnvDir+" or the application-support folder)")
}

// resolveModel turns a --model value (a file path or the name of a model
// in the models folder) into a file path.
func resolveModel(e Env, arg string) (string, error) {
	s, err := models.Open(e.ModelsDir)
	if err != nil {
		return "", err
	}
	path, err := s.Resolve(arg)
	switch {
	case errors.Is(err, models.ErrNotFound):
		if _, ok := models.Lookup(arg); ok {
			return "", fmt.Errorf("the model %s is not installed: download it with `hark models pull %s`", arg, arg)
		}
		return "", fmt.Errorf("no model called %q in %s: give a model file, or a name from `hark models list`", arg, s.Dir)
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("%s: no such model file", arg)
	}
	return path, err
}
