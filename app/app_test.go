package app

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// maxAppMethods bounds *App: it keeps the lifecycle and the wiring, and
// every flow lives in the service it belongs to (#32).
const maxAppMethods = 12

// TestAppIsWiringOnly counts the methods declared on App in the package's
// sources, unexported ones included.
func TestAppIsWiringOnly(t *testing.T) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	var methods []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || len(fn.Recv.List) != 1 {
				continue
			}
			typ := fn.Recv.List[0].Type
			if s, ok := typ.(*ast.StarExpr); ok {
				typ = s.X
			}
			if id, ok := typ.(*ast.Ident); ok && id.Name == "App" {
				methods = append(methods, fn.Name.Name)
			}
		}
	}
	require.NotEmpty(t, methods, "the parse found App's methods")
	require.LessOrEqual(t, len(methods), maxAppMethods, "App's methods: %v", methods)
}

// TestServicesNeverCallTheApp walks every service New made, with the
// structs of dependencies it holds: none holds the App, a method value of
// the App, or a closure made in New (which could reach the App); the
// steps into other services are those services' own methods.
func TestServicesNeverCallTheApp(t *testing.T) {
	a := openApp(t, t.TempDir(), t.TempDir(), nil)
	appType := reflect.TypeFor[*App]()
	var walk func(path string, v reflect.Value)
	walk = func(path string, v reflect.Value) {
		switch v.Kind() {
		case reflect.Struct:
			for i := range v.NumField() {
				walk(path+"."+v.Type().Field(i).Name, v.Field(i))
			}
		case reflect.Pointer, reflect.Interface:
			if v.IsNil() {
				return
			}
			if v.Kind() == reflect.Interface {
				v = v.Elem()
			}
			require.NotEqual(t, appType, v.Type(), "%s holds the App", path)
		case reflect.Func:
			if v.IsNil() {
				return
			}
			name := goruntime.FuncForPC(v.Pointer()).Name()
			require.NotContains(t, name, "(*App)", "%s is a method of the App", path)
			require.NotContains(t, name, "app.New.", "%s is a closure made in New", path)
		}
	}
	services := append(a.Services(), a.Files)
	for _, s := range services {
		v := reflect.ValueOf(s)
		require.Equal(t, reflect.Pointer, v.Kind())
		walk(v.Type().String(), v.Elem())
	}
	// The walk does see a service's steps into another.
	name := goruntime.FuncForPC(reflect.ValueOf(a.History.deps.recording).Pointer()).Name()
	require.Contains(t, name, "(*Dictation).recording")
}
