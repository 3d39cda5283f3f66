package llm

import (
	"errors"
	"fmt"
	"testing"

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

// TestFusedProducts: where the file holds Q, K, V (gate, up) back to back
// with one type and no biases, decode runs them as one product over the
// stacked rows, bound as one weight buffer (the separate tensors are not
// declared, so nothing is uploaded twice); biases or another order keep
// the separate products. TestTinyModels holds each variant's logits to the
// float64 forward pass.
func TestFusedProducts(t *testing.T) {
	withTestArchs(t)
	for _, c := range []struct {
		spec          tinySpec
		qkv, gateUp   bool
		productsLayer int // decode products a layer: qkv, o, gate|up, down
	}{
		{spec: tinySpec{arch: "llama"}, qkv: true, gateUp: true, productsLayer: 4},
		{spec: tinySpec{arch: "llama", upFirst: true}, qkv: true, productsLayer: 5},
		{spec: tinySpec{arch: "qwen2"}, gateUp: true, productsLayer: 6},       // Q/K/V biases
		{spec: tinySpec{arch: "test-post-gelu"}, qkv: true, productsLayer: 4}, // qkv, o, up, down: no gate
	} {
		t.Run(fmt.Sprintf("%s/upFirst=%v", c.spec.arch, c.spec.upFirst), func(t *testing.T) {
			var b planOf
			_, err := Load(&b, tinyModel(t, c.spec), Options{Batch: 5, F32Cache: true})
			require.ErrorIs(t, err, errKept)
			names := map[string]bool{}
			for _, buf := range b.p.Buffers {
				names[buf.Name] = true
			}
			for l := range tinyLayer {
				fused := fmt.Sprintf("blk.%d.attn_qkv (fused)", l)
				require.Equal(t, c.qkv, names[fused], fused)
				require.Equal(t, !c.qkv, names[fmt.Sprintf("blk.%d.attn_q.weight", l)])
				fused = fmt.Sprintf("blk.%d.ffn_gate_up (fused)", l)
				require.Equal(t, c.gateUp, names[fused], fused)
				require.Equal(t, c.gateUp, !names[fmt.Sprintf("blk.%d.ffn_up.weight", l)])
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
