package cuda

// startImages are what opening a device needs from the host before it
// loads the kernels: each module's cubin read from the cache and checked,
// and the native modules' PTX inflated and scanned for their entry names.
// They depend only on the GPU's compute capability, so they are made
// while the driver creates the context (~0.1 s on the H200), which needs
// none of them; made in line, they added ~20-30 ms to every start.
type startImages struct {
	done    chan struct{}
	cubins  map[string][]byte          // by module ("kernels", or a native module's name); nil: none for this GPU
	pdl     map[string]bool            // the module's cubin was made for programmatic dependent launch
	entries map[string]map[string]bool // a native module's entry names
}

// prefetchStartImages starts making the images for compute capability cc.
func prefetchStartImages(cc int, noNative bool) *startImages {
	s := &startImages{done: make(chan struct{}), cubins: map[string][]byte{}, pdl: map[string]bool{}, entries: map[string]map[string]bool{}}
	go func() {
		defer close(s.done)
		s.cubins["kernels"], s.pdl["kernels"] = cubinFor("kernels", cc)
		if noNative {
			return
		}
		for _, nm := range modulesFor(cc, nativeModules) {
			s.cubins[nm.name], s.pdl[nm.name] = cubinFor(nm.name, cc)
			s.entries[nm.name] = ptxEntries(nm.ptx())
		}
	}()
	return s
}

// cubin waits for the images and returns module's cubin (nil: none) and
// whether it was made for programmatic dependent launch.
func (s *startImages) cubin(module string) ([]byte, bool) {
	<-s.done
	return s.cubins[module], s.pdl[module]
}

// entryNames waits for the images and returns native module's entries.
func (s *startImages) entryNames(module string) map[string]bool {
	<-s.done
	return s.entries[module]
}
