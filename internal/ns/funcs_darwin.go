package ns

// Sym is one C function to bind: Fn points at the Go func variable that
// calls it, Lib is the library's handle (Framework, or purego.Dlopen).
type Sym struct {
	Lib  uintptr
	Fn   any
	Name string
}

// Funcs binds each symbol in turn (Func), stopping at the first one this
// macOS version lacks.
func Funcs(syms ...Sym) error {
	for _, s := range syms {
		if err := Func(s.Fn, s.Lib, s.Name); err != nil {
			return err
		}
	}
	return nil
}
