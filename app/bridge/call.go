package bridge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
)

// service is one registered struct and its exported methods.
type service struct {
	name    string
	methods map[string]reflect.Value
}

var errorType = reflect.TypeFor[error]()

func newService(s any) (*service, error) {
	v := reflect.ValueOf(s)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("bridge: service %T is not a non-nil pointer to a struct", s)
	}
	svc := &service{name: v.Elem().Type().Name(), methods: map[string]reflect.Value{}}
	t := v.Type()
	for i := range t.NumMethod() {
		m := t.Method(i)
		mt := m.Type
		// As Wails: at most two results, and a second one must be an error.
		if mt.NumOut() > 2 || (mt.NumOut() == 2 && mt.Out(1) != errorType) {
			continue
		}
		svc.methods[m.Name] = v.Method(i)
	}
	return svc, nil
}

// reply is the body of every /api answer.
type reply struct {
	Result any    `json:"result,omitempty"`
	Error  string `json:"error,omitempty"`
}

func writeJSON(w http.ResponseWriter, code int, r reply) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(r)
}

func (b *Bridge) serveCall(w http.ResponseWriter, r *http.Request) {
	svcName, method, ok := strings.Cut(r.PathValue("name"), ".")
	b.mu.RLock()
	svc := b.calls[svcName]
	b.mu.RUnlock()
	if !ok || svc == nil {
		writeJSON(w, http.StatusNotFound, reply{Error: fmt.Sprintf("no such service %q", svcName)})
		return
	}
	fn, ok := svc.methods[method]
	if !ok {
		writeJSON(w, http.StatusNotFound, reply{Error: fmt.Sprintf("no such method %s.%s", svcName, method)})
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxCallBody))
	if err != nil {
		writeJSON(w, http.StatusRequestEntityTooLarge, reply{Error: "arguments: " + b.errText(err)})
		return
	}
	args, err := decodeArgs(fn.Type(), body)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, reply{Error: b.errText(fmt.Errorf("%s.%s: %w", svcName, method, err))})
		return
	}
	res, err := invoke(fn, args)
	if err != nil {
		writeJSON(w, http.StatusOK, reply{Error: b.errText(err)})
		return
	}
	writeJSON(w, http.StatusOK, reply{Result: res})
}

// decodeArgs turns a JSON array into the method's argument values. An
// empty body means no arguments.
func decodeArgs(ft reflect.Type, body []byte) ([]reflect.Value, error) {
	var raw []json.RawMessage
	if len(bytes.TrimSpace(body)) > 0 {
		if err := json.Unmarshal(body, &raw); err != nil {
			return nil, fmt.Errorf("arguments must be a JSON array: %w", err)
		}
	}
	if ft.IsVariadic() || len(raw) != ft.NumIn() {
		return nil, fmt.Errorf("takes %d arguments, got %d", ft.NumIn(), len(raw))
	}
	args := make([]reflect.Value, len(raw))
	for i, m := range raw {
		p := reflect.New(ft.In(i))
		if err := json.Unmarshal(m, p.Interface()); err != nil {
			return nil, fmt.Errorf("argument %d: %w", i+1, err)
		}
		args[i] = p.Elem()
	}
	return args, nil
}

// invoke calls fn, turning a trailing error result into err and a panic
// into an error rather than a dead server.
func invoke(fn reflect.Value, args []reflect.Value) (res any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("internal error: %v", p)
		}
	}()
	out := fn.Call(args)
	if n := len(out); n > 0 && fn.Type().Out(n-1) == errorType {
		if e, _ := out[n-1].Interface().(error); e != nil {
			return nil, e
		}
		out = out[:n-1]
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out[0].Interface(), nil
}
