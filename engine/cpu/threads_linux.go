package cpu

import (
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// physicalCores counts the distinct cores (package, core id) among the CPUs
// in this process's affinity mask, so `taskset -c 0,1` on a machine with
// SMT siblings 0/16 gives 2 and a cgroup-limited container gives its share.
// On hybrid Intel CPUs only the performance cores count. 0 when the
// topology cannot be read.
func physicalCores() int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return 0
	}
	perf := perfCPUs()
	cores := map[string]bool{}
	for cpu := 0; cpu < 1024; cpu++ {
		if !set.IsSet(cpu) || (perf != nil && !perf[cpu]) {
			continue
		}
		dir := fmt.Sprintf("/sys/devices/system/cpu/cpu%d/topology/", cpu)
		pkg, err1 := os.ReadFile(dir + "physical_package_id")
		core, err2 := os.ReadFile(dir + "core_id")
		if err1 != nil || err2 != nil {
			return 0
		}
		cores[strings.TrimSpace(string(pkg))+"/"+strings.TrimSpace(string(core))] = true
	}
	return len(cores)
}

// perfCPUs is the set of performance CPUs on a hybrid Intel CPU (the kernel
// lists them in cpu_core's PMU), nil elsewhere.
func perfCPUs() map[int]bool {
	b, err := os.ReadFile("/sys/devices/cpu_core/cpus")
	if err != nil {
		return nil
	}
	set := map[int]bool{}
	for _, r := range strings.Split(strings.TrimSpace(string(b)), ",") {
		var lo, hi int
		if n, _ := fmt.Sscanf(r, "%d-%d", &lo, &hi); n == 2 {
			for c := lo; c <= hi; c++ {
				set[c] = true
			}
		} else if n == 1 {
			set[lo] = true
		}
	}
	if len(set) == 0 {
		return nil
	}
	return set
}
