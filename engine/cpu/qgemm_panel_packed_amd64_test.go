package cpu

import "testing"

// addPanelVersions adds the AVX-512 packPanelQ8Packed where this CPU runs
// it.
func addPanelVersions(t *testing.T, m map[string]func(*packed, int, []byte)) {
	if !panelAVX512 {
		t.Log("no AVX-512 (F, DQ, VL): packPanelQ8Fast is not tested here")
		return
	}
	m["avx512"] = packPanelQ8Fast
}
