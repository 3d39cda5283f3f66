package cuda

// ModuleLoads is moduleLoads for the external tests.
func ModuleLoads() int64 { return moduleLoads.Load() }
