package cpu

// dotF32 is Σ a[i]·b[i] over len(a) elements; b must be at least as long.
var dotF32 = dotF32Generic
