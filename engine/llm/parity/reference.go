package parity

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
)

// Sampled is one logit row as recorded: the ids sampled (every 97th and
// the 32 largest) and their logits.
type Sampled struct {
	IDs    []int     `json:"ids"`
	Values []float64 `json:"values"`
}

// Reference is what tools/parity/llm_hf.py (and gemma3_hf.py) recorded
// with transformers.
type Reference struct {
	Architecture string `json:"architecture"`
	Results      []struct {
		Prompt       []int32   `json:"prompt"`
		PromptLogits []Sampled `json:"prompt_logits"`
		Greedy       []int32   `json:"greedy"`
		StepLogits   []Sampled `json:"step_logits"`
	} `json:"results"`
}

// Diff returns max|ref-got| / max|ref| and the RMS of the difference over
// the RMS of the reference, on the Sampled ids.
func Diff(ref Sampled, logits []float32) (maxRel, rmsRel float64) {
	var maxRef, maxD, sq, sqRef float64
	for i, id := range ref.IDs {
		d := math.Abs(ref.Values[i] - float64(logits[id]))
		if math.IsNaN(d) {
			return math.Inf(1), math.Inf(1)
		}
		maxRef = math.Max(maxRef, math.Abs(ref.Values[i]))
		maxD = math.Max(maxD, d)
		sq += d * d
		sqRef += ref.Values[i] * ref.Values[i]
	}
	return maxD / maxRef, math.Sqrt(sq / sqRef)
}

// ReadReference reads a reference JSON file of architecture arch.
func ReadReference(path, arch string) (Reference, error) {
	var ref Reference
	b, err := os.ReadFile(path)
	if err != nil {
		return ref, err
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		return ref, fmt.Errorf("parity: %s: %w", path, err)
	}
	if ref.Architecture != arch {
		return ref, fmt.Errorf("parity: %s is a %q reference, want %q", path, ref.Architecture, arch)
	}
	return ref, nil
}
