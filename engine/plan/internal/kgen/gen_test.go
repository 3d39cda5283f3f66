package kgen

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// withKernels runs f with a modified copy of the kernel set.
func withKernels(t *testing.T, edit func(ks []Kernel), f func()) {
	saved := Kernels
	ks := slices.Clone(saved)
	for i := range ks {
		ks[i].Binds, ks[i].Params, ks[i].Families = slices.Clone(ks[i].Binds), slices.Clone(ks[i].Params), slices.Clone(ks[i].Families)
	}
	edit(ks)
	Kernels = ks
	t.Cleanup(func() { Kernels = saved })
	f()
	Kernels = saved
}

func kernel(ks []Kernel, name string) *Kernel {
	for i := range ks {
		if ks[i].Name == name {
			return &ks[i]
		}
	}
	panic(name)
}

// The declared contract passes; a member that does not have its family's
// fields in place, an unknown family, a family of one and an enum on a
// non-mode field are rejected before anything is generated.
func TestValidateFamilies(t *testing.T) {
	require.NoError(t, validate())
	cases := map[string]struct {
		edit func(ks []Kernel)
		msg  string
	}{
		"moved binding": {func(ks []Kernel) {
			k := kernel(ks, "LayerNorm")
			k.Binds[0], k.Binds[1] = k.Binds[1], k.Binds[0]
		}, "LayerNorm binding 0 (W) does not match its family Norm's X"},
		"other element":    {func(ks []Kernel) { kernel(ks, "MatMul").Binds[2].Elem = I32 }, "MatMul binding 2 (Out) does not match its family Product's Out"},
		"other param kind": {func(ks []Kernel) { kernel(ks, "RMSNorm").Params[4].Kind = U32 }, "RMSNorm param 4 (Eps) does not match its family Norm's Eps"},
		"renamed param":    {func(ks []Kernel) { kernel(ks, "GELUMulMatVec").Params[6].Name = "Ldz" }, "GELUMulMatVec param 6 (Ldz) does not match its family Gated's Ldu"},
		"not patchable":    {func(ks []Kernel) { kernel(ks, "MatVec").Params[2].Patch = false }, "MatVec param 2 (M) does not match"},
		"untyped":          {func(ks []Kernel) { kernel(ks, "MatVec").Typed = false }, "MatVec and its family Product disagree on Type"},
		"too short":        {func(ks []Kernel) { k := kernel(ks, "SiLUMulMatVec"); k.Binds = k.Binds[:5] }, "SiLUMulMatVec lacks fields of its family Gated"},
		"unknown family":   {func(ks []Kernel) { kernel(ks, "Add").Families = []string{"Elementwise"} }, `Add: unknown family "Elementwise"`},
		"family of one":    {func(ks []Kernel) { kernel(ks, "LayerNorm").Families = nil }, "family Norm has 1 members"},
		"enum on a count":  {func(ks []Kernel) { kernel(ks, "Conv1D").Params[0].Enum = "Activation" }, `Conv1D.Cin: enum "Activation" must be a declared Enum on a Bits field`},
		"unknown enum":     {func(ks []Kernel) { kernel(ks, "Embed").Params[3].Enum = "Colour" }, `Embed.Flags: enum "Colour"`},
	}
	for name, c := range cases {
		withKernels(t, c.edit, func() {
			err := validate()
			require.Error(t, err, name)
			require.Contains(t, err.Error(), c.msg, name)
		})
	}
}
