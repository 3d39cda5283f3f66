package gguf

import "os"

// Rewrite writes a copy of the GGUF file src to the new file dst with the
// metadata keys of set added or replaced (the tensors unchanged), e.g. to
// give a model another chat template. A failed copy is removed.
func Rewrite(src, dst string, set map[string]Value) (err error) {
	f, err := Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(dst)
		}
	}()
	w := NewWriter(out)
	for _, kv := range f.KVs {
		if _, ok := set[kv.Key]; !ok {
			if err = w.AddKV(kv.Key, kv.Value); err != nil {
				return err
			}
		}
	}
	for k, v := range set {
		if err = w.AddKV(k, v); err != nil {
			return err
		}
	}
	for _, tn := range f.Tensors {
		if err = w.AddTensor(tn.Name, tn.Type, tn.Shape); err != nil {
			return err
		}
	}
	for _, tn := range f.Tensors {
		if err = w.WriteTensor(tn.Data); err != nil {
			return err
		}
	}
	return w.Close()
}
