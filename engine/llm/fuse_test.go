package llm

import (
	"errors"
	"fmt"
	"testing"

	"github.com/harkapp/hark/engine/gguf"
	"github.com/harkapp/hark/engine/plan"
	"github.com/stretchr/testify/require"
)

// planOf is a backend that keeps the plan it is given and loads nothing.
type planOf struct{ p *plan.Plan }

var errKept = errors.New("plan kept, not loaded")

func (b *planOf) Name() string { return "plan-of" }

func (b *planOf) Load(p *plan.Plan) (plan.Executable, error) {
	b.p = p
	return nil, errKept
}

// TestFusedProducts: where Q, K, V (gate, up) share one type and have no
// biases, decode runs them as one product over the stacked rows, bound as
// one weight buffer (the separate tensors are not declared, so nothing is
// uploaded twice): the file's span when they lie back to back, their
// slices stacked (Parts, in role order) when they lie apart; biases keep
// the separate products. TestTinyModels holds each variant's logits to the
// float64 forward pass.
func TestFusedProducts(t *testing.T) {
	withTestArchs(t)
	for _, c := range []struct {
		spec                 tinySpec
		qkv, gateUp          bool
		stackQKV, stackGateU bool // fused from parts, not a span of the file
		productsLayer        int  // decode products a layer: qkv, o, gate|up, down
	}{
		{spec: tinySpec{arch: "llama"}, qkv: true, gateUp: true, productsLayer: 4},
		{spec: tinySpec{arch: "llama", upFirst: true}, qkv: true, gateUp: true, stackGateU: true, productsLayer: 4},
		{spec: tinySpec{arch: "llama", nameOrder: true}, qkv: true, gateUp: true, stackQKV: true, stackGateU: true, productsLayer: 4},
		{spec: tinySpec{arch: "qwen2"}, gateUp: true, productsLayer: 6},                                    // Q/K/V biases
		{spec: tinySpec{arch: "qwen2", nameOrder: true}, gateUp: true, stackGateU: true, productsLayer: 6}, // likewise
		{spec: tinySpec{arch: "test-post-gelu"}, qkv: true, productsLayer: 4},                              // qkv, o, up, down: no gate
	} {
		t.Run(fmt.Sprintf("%s/upFirst=%v/nameOrder=%v", c.spec.arch, c.spec.upFirst, c.spec.nameOrder), func(t *testing.T) {
			f := tinyModel(t, c.spec)
			var b planOf
			_, err := Load(&b, f, Options{Batch: 5, F32Cache: true})
			require.ErrorIs(t, err, errKept)
			names := map[string]bool{}
			bufs := map[string]plan.Buffer{}
			for _, buf := range b.p.Buffers {
				names[buf.Name] = true
				bufs[buf.Name] = buf
			}
			for l := range tinyLayer {
				fused := fmt.Sprintf("blk.%d.attn_qkv (fused)", l)
				require.Equal(t, c.qkv, names[fused], fused)
				require.Equal(t, !c.qkv, names[fmt.Sprintf("blk.%d.attn_q.weight", l)])
				if c.qkv {
					requireStacked(t, f, bufs[fused], c.stackQKV, l, "attn_q", "attn_k", "attn_v")
				}
				fused = fmt.Sprintf("blk.%d.ffn_gate_up (fused)", l)
				require.Equal(t, c.gateUp, names[fused], fused)
				require.Equal(t, c.gateUp, !names[fmt.Sprintf("blk.%d.ffn_up.weight", l)])
				if c.gateUp {
					requireStacked(t, f, bufs[fused], c.stackGateU, l, "ffn_gate", "ffn_up")
				}
			}
			require.Equal(t, c.gateUp, names["ffn.gate_up"], "the gate|up scratch row")

			var decode *plan.Pass
			for _, ps := range b.p.Passes {
				if ps.Name == "decode" {
					decode = ps
				}
			}
			require.NotNil(t, decode)
			products := 0
			for _, d := range decode.Ops {
				switch d.Kernel {
				case plan.MatVec, plan.RMSNormMatVec, plan.SiLUMulMatVec, plan.GELUMulMatVec:
					products++
				}
			}
			require.Equal(t, tinyLayer*c.productsLayer+1, products, "decode products (and the logits)")
		})
	}
}

// requireStacked checks a fused weights buffer: the layer's role tensors in
// role order, as parts (stacked) or as one span of the file.
func requireStacked(t *testing.T, f *gguf.File, b plan.Buffer, stacked bool, layer int, roles ...string) {
	t.Helper()
	var want []byte
	for _, r := range roles {
		src, ok := f.Tensor(fmt.Sprintf("blk.%d.%s.weight", layer, r))
		require.True(t, ok, r)
		want = append(want, src.Data...)
	}
	require.Equal(t, stacked, b.Parts != nil, "%s stacked from parts", b.Name)
	require.Equal(t, int64(len(want)), b.Size, b.Name)
	require.Equal(t, want, b.WeightBytes(), b.Name)
}
