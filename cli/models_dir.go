package cli

import (
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
func resolveModel(cmd *cobra.Command, arg string) (string, error) {
	dir, _ := cmd.Flags().GetString(modelsDirFlag)
	s, err := models.Open(dir)
	if err != nil {
		return "", err
	}
	return s.Resolve(arg)
}
