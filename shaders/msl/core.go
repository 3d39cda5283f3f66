package msl

import _ "embed"

// CoreHeader is cxx/msl_core.h, the portable part of the compatibility
// layer (types, vectors, math, limits, atomics) that both targets'
// headers include: the executor's msl.h writes it beside its sources,
// cuda/gen puts cxx/ on the include path.
//
//go:embed cxx/msl_core.h
var CoreHeader []byte
