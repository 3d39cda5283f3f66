//go:build !linux

package cpu

// releasePages releases nothing where the kind of mapping a range lies in
// cannot be told from /proc/self/maps (the packed kernels are x86
// AVX-512 VNNI ones: Apple silicon never packs).
func releasePages([][]byte) int64 { return 0 }

// dropPages keeps the pages where they cannot be told apart from the
// Go heap's (no mapping here) or are not known to be given back at once
// (darwin's MADV_DONTNEED is advisory): scratch stays resident, as it
// did before (spare.go).
func dropPages([]byte) int64 { return 0 }
