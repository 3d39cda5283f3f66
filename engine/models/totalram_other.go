//go:build !linux && !darwin

package models

// TotalRAM is unknown here (0): callers then make no recommendation.
func TotalRAM() int64 { return 0 }
