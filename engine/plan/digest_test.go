package plan

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func digestPlan() *Plan {
	var p Plan
	p.Name = "p"
	w := p.AddBuffer(Buffer{Name: "w", Kind: BufWeights, Size: 8, Data: make([]byte, 8)})
	x := p.AddBuffer(Buffer{Name: "x", Kind: Scratch, Size: 64})
	ps, _ := p.AddPass("step")
	d := ScaleArgs{X: Binding{Buf: x}, Out: Binding{Buf: x, Off: 32}, N: 4, M: 2, Ldx: 4, Ldo: 4, Scale: 0.5}.Dispatch()
	d.AddPatch(PatchScaleM, VarNTok, 1, 0)
	ps.Add(d)
	ps.Add(Dispatch{Kernel: Embed, NBind: 3, Bind: [MaxBind]Binding{{Buf: w}, {Buf: x}, {Buf: x, Off: 16}}})
	return &p
}

// The digest covers every field of the buffer table and of each dispatch
// record, and not the content of the weights.
func TestDigestCoversEveryField(t *testing.T) {
	base := digestPlan().Digest()
	require.Equal(t, base, digestPlan().Digest(), "deterministic")

	same := digestPlan()
	same.Buffers[0].Data[3] = 9
	require.Equal(t, base, same.Digest(), "weight bytes are not part of the plan")

	edits := map[string]func(p *Plan){
		"plan name":    func(p *Plan) { p.Name = "q" },
		"buffer name":  func(p *Plan) { p.Buffers[1].Name = "y" },
		"buffer kind":  func(p *Plan) { p.Buffers[1].Kind = State },
		"buffer size":  func(p *Plan) { p.Buffers[1].Size++ },
		"weights size": func(p *Plan) { p.Buffers[0].Data = p.Buffers[0].Data[:4] },
		"pass name":    func(p *Plan) { p.Passes[0].Name = "other" },
		"op count":     func(p *Plan) { p.Passes[0].Ops = p.Passes[0].Ops[:1] },
		"kernel":       func(p *Plan) { p.Passes[0].Ops[0].Kernel = Softmax },
		"type":         func(p *Plan) { p.Passes[0].Ops[1].Type = 1 },
		"bind count":   func(p *Plan) { p.Passes[0].Ops[0].NBind = 3 },
		"binding buf":  func(p *Plan) { p.Passes[0].Ops[0].Bind[1].Buf = 0 },
		"binding off":  func(p *Plan) { p.Passes[0].Ops[0].Bind[1].Off = 36 },
		"params word":  func(p *Plan) { p.Passes[0].Ops[0].P[15] = 1 },
		"grid":         func(p *Plan) { p.Passes[0].Ops[0].Grid[2] = 7 },
		"patch count":  func(p *Plan) { p.Passes[0].Ops[0].NPatch = 0 },
		"patch var":    func(p *Plan) { p.Passes[0].Ops[0].Patch[0].Var = VarPos },
		"patch mul":    func(p *Plan) { p.Passes[0].Ops[0].Patch[0].Mul = 2 },
		"patch base":   func(p *Plan) { p.Passes[0].Ops[0].Patch[0].Base = 1 },
		"patch target": func(p *Plan) { p.Passes[0].Ops[0].Patch[0].Target = PatchOffset0 },
		"moved string": func(p *Plan) { p.Name, p.Buffers[0].Name = "pw", "" },
	}
	for name, edit := range edits {
		p := digestPlan()
		edit(p)
		require.NotEqual(t, base, p.Digest(), name)
	}
}
