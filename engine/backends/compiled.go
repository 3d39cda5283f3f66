package backends

// Compiled lists the backends this binary carries for its platform (what
// `hark --version` and About report): the CPU everywhere, Metal on macOS.
// Whether Metal starts is decided by Open at run time.
func Compiled() []string {
	if goos == "darwin" {
		return []string{CPU, Metal}
	}
	return []string{CPU}
}
