package cpu

// spinPause is one PAUSE: it tells the core a spin-wait is running, which
// frees its pipeline for the sibling hyperthread and avoids the
// memory-order flush when the polled word changes.
//
//go:noescape
func spinPause()
