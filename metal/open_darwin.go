package metal

// New opens the system's default Metal device (compiling the shader
// library on first use in the process) and returns a backend on it.
func New() (*Backend, error) {
	d, err := systemDevice()
	if err != nil {
		return nil, err
	}
	return newBackend(d), nil
}
