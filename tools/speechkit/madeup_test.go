package speechkit

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

// The made-up training terms are distinct, spelled unlike their sounds, and
// replace a real term inside its carrier (madeup.py's check).
func TestMadeUpTerms(t *testing.T) {
	out, err := exec.Command("python3", "madeup.py").CombinedOutput()
	require.NoError(t, err, string(out))
	require.Contains(t, string(out), "2000 terms and the swap checked")
}
