package msl

import _ "embed"

// The compatibility layer's shared headers, included by both targets'
// own headers (the executor's msl.h writes them beside its sources,
// cuda/gen puts cxx/ on the include path).
var (
	// CoreHeader is cxx/msl_core.h: types, vectors, math, limits, atomics.
	//
	//go:embed cxx/msl_core.h
	CoreHeader []byte

	// SimdgroupHeader is cxx/msl_simdgroup.h: the simdgroup-matrix
	// typedefs, store and product over each target's storage.
	//
	//go:embed cxx/msl_simdgroup.h
	SimdgroupHeader []byte
)

// Headers are the shared headers by file name.
func Headers() map[string][]byte {
	return map[string][]byte{"msl_core.h": CoreHeader, "msl_simdgroup.h": SimdgroupHeader}
}
