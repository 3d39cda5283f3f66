//go:build !unix

package models

// freeBytes is unknown off unix (Windows would need GetDiskFreeSpaceEx);
// the download then fails only when the disk actually fills.
func freeBytes(string) (int64, bool) { return 0, false }
