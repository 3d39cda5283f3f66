package ptxpdl

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/cuda/ptxstore"
)

const small = `//
.version 6.4
.target sm_75
.address_size 64

.func  (.param .b32 func_retval0) helper(
	.param .b32 helper_param_0
)
{
	.reg .b32 	%r<3>;
	ld.param.u32 	%r1, [helper_param_0];
	st.param.b32 	[func_retval0+0], %r1;
	ret;
}
.visible .entry hark_a(
	.param .align 8 .b8 hark_a_param_0[16]
)
.maxntid 256, 1, 1
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<4>;
	// demoted variable
	.shared .align 4 .b8 s[80];

	mov.u32 	%r1, %tid.x;
	ret;
}
.visible .entry hark_b(
	.param .align 8 .b8 hark_b_param_0[16]
)
{
	ret;
}
`

func TestPatchSmall(t *testing.T) {
	out, err := Patch([]byte(small))
	require.NoError(t, err)
	s := string(out)
	require.Contains(t, s, "\n.version 7.8\n.target sm_90\n")
	require.Contains(t, s, "\t.shared .align 4 .b8 s[80];\n\n"+wait+"\tmov.u32 \t%r1, %tid.x;\n", "after the declarations, before the first instruction")
	require.Contains(t, s, ")\n{\n"+wait+"\tret;\n}\n", "an entry without declarations")
	require.Equal(t, 2, strings.Count(s, "griddepcontrol.wait"), "entries only, once each")
	require.Contains(t, s, "{\n\t.reg .b32 \t%r<3>;\n\tld.param.u32", "a .func is left alone")
	require.Equal(t, strings.ReplaceAll(small, ".version 6.4\n.target sm_75", ".version 7.8\n.target sm_90"),
		strings.ReplaceAll(s, wait, ""), "nothing else changes")
}

// An entry with the wait's marker waits there and not at its start; the
// launch marker becomes the trigger; the other entries are as before.
func TestPatchMarkers(t *testing.T) {
	marked := strings.Replace(small, "\tmov.u32 \t%r1, %tid.x;\n",
		"\t// begin inline asm\n\t"+LaunchMarker+"\n\t// end inline asm\n\tmov.u32 \t%r1, %tid.x;\n\t// begin inline asm\n\t"+WaitMarker+"\n\t// end inline asm\n", 1)
	require.NotEqual(t, small, marked)
	out, err := Patch([]byte(marked))
	require.NoError(t, err)
	s := string(out)
	require.Contains(t, s, "\t.shared .align 4 .b8 s[80];\n\n\t// begin inline asm\n\tgriddepcontrol.launch_dependents;\n\t// end inline asm\n\tmov.u32 \t%r1, %tid.x;\n\t// begin inline asm\n\tgriddepcontrol.wait;\n",
		"the marked entry: the trigger and the wait where the markers were, none at the start")
	require.Contains(t, s, ")\n{\n"+wait+"\tret;\n}\n", "the other entry waits at its start")
	require.Equal(t, 2, strings.Count(s, "griddepcontrol.wait"))
	require.Equal(t, 1, strings.Count(s, "griddepcontrol.launch_dependents"))
	require.NotContains(t, s, "hark:pdl")
}

func TestPatchKeepsNewerTargets(t *testing.T) {
	in := strings.Replace(strings.Replace(small, "6.4", "8.0", 1), "sm_75", "sm_90a", 1)
	out, err := Patch([]byte(in))
	require.NoError(t, err)
	require.Contains(t, string(out), "\n.version 8.0\n.target sm_90a\n")
}

func TestPatchRefuses(t *testing.T) {
	for name, in := range map[string]string{
		"no version": strings.Replace(small, ".version 6.4\n", "", 1),
		"no target":  strings.Replace(small, ".target sm_75\n", "", 1),
		"no entry":   small[:strings.Index(small, ".visible .entry")],
		"no body":    strings.Replace(small, ")\n{\n\tret;", ")\n;\n\tret;", 1),
	} {
		_, err := Patch([]byte(in))
		require.Error(t, err, name)
	}
}

// Every stored module: one wait per entry, and nothing else changed but
// the header.
func TestPatchModules(t *testing.T) {
	for _, f := range []string{"kernels.ptx.xz", "kernels_sm80.ptx.xz", "kernels_sm90a.ptx.xz"} {
		ptx, err := ptxstore.Read(filepath.Join("..", f))
		require.NoError(t, err, f)
		out, err := Patch(ptx)
		require.NoError(t, err, f)
		entries := bytes.Count(ptx, []byte(".entry "))
		require.Positive(t, entries, f)
		// each entry waits once: at its start or at its marker
		require.Equal(t, entries, bytes.Count(out, []byte("griddepcontrol.wait;")), f)
		require.Equal(t, bytes.Count(ptx, []byte(LaunchMarker)), bytes.Count(out, []byte("griddepcontrol.launch_dependents;")), f)
		require.Zero(t, bytes.Count(out, []byte("hark:pdl")), f)
		// walk out against ptx: a wait line where ptx has no wait marker
		// is one Patch inserted (a marker's own line may read exactly the
		// same once replaced, so the inserted ones cannot be removed by
		// their text alone)
		in, got := lines(ptx), lines(out)
		inserted, j := strings.TrimSuffix(wait, "\n"), 0
		for _, g := range got {
			if g == inserted && (j >= len(in) || !strings.Contains(in[j], WaitMarker)) {
				continue
			}
			require.Less(t, j, len(in), f)
			if in[j] != g {
				switch {
				case strings.Contains(in[j], WaitMarker):
					require.Equal(t, strings.Replace(in[j], WaitMarker, "griddepcontrol.wait;", 1), g)
				case strings.Contains(in[j], LaunchMarker):
					require.Equal(t, strings.Replace(in[j], LaunchMarker, "griddepcontrol.launch_dependents;", 1), g)
				default:
					require.Regexp(t, `^\.(version|target) `, in[j], "%s line %d", f, j+1)
				}
			}
			j++
		}
		require.Equal(t, len(in), j, f)
	}
}

func lines(b []byte) []string { return strings.Split(string(b), "\n") }
