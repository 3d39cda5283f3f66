package cpu

import "golang.org/x/sys/unix"

// physicalCores is the performance cores on Apple silicon and other hybrid
// Macs (perflevel0), else the physical cores; 0 if sysctl has neither.
func physicalCores() int {
	for _, name := range []string{"hw.perflevel0.physicalcpu", "hw.physicalcpu"} {
		if n, err := unix.SysctlUint32(name); err == nil && n > 0 {
			return int(n)
		}
	}
	return 0
}
