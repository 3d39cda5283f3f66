package cuda

// Present reports whether this machine has an NVIDIA driver and a GPU the
// kernels run on (compute capability MinCompute or newer). It loads the
// driver but creates no context and loads no kernels, so it is cheap
// enough for `hark --version`; New still decides whether a GPU starts.
func Present() bool {
	d, err := driverLoader()
	if err != nil {
		return false
	}
	var n int32
	if d.cuDeviceGetCount(&n) != 0 {
		return false
	}
	for i := range n {
		var dev, major, minor int32
		if d.cuDeviceGet(&dev, i) != 0 ||
			d.cuDeviceGetAttribute(&major, attrComputeMajor, dev) != 0 ||
			d.cuDeviceGetAttribute(&minor, attrComputeMinor, dev) != 0 {
			continue
		}
		if int(major)*10+int(minor) >= MinCompute {
			return true
		}
	}
	return false
}
