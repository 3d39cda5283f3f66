package shaders

import "github.com/harkapp/hark/engine/plan"

// ForPlan is t as it applies to p: a plan that asks for float
// activations (plan.Plan.FloatActivations) gets neither the int8 GEMM
// (MatMulMMQ) nor the 8-bit-activation mat-vecs (MatVecQ8K). Every GPU
// backend's Load goes through it.
func (t Tuning) ForPlan(p *plan.Plan) Tuning {
	if p.FloatActivations {
		t.MatMulMMQ = 0
		t.MatVecQ8K, t.MatVecQ8KQ8_0 = MatVecQ8Off, MatVecQ8Off
	}
	return t
}
