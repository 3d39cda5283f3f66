package shared

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Every test's wait for something to happen goes through Wait, so that
// HARK_TEST_TIMEOUT_SCALE (scripts/test --busy N) scales all of them: no
// test in the module bounds a require.Eventually, a time.After, a
// context.WithTimeout or a time.Now().Add deadline with a fixed duration
// of a second or more.
// (Benchmarks are not run by the suite and are not checked; a bound held
// in a variable is assumed to be derived from Wait.)
func TestWaitsAreScaled(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	var bad []string
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "third_party" || n == "node_modules" || strings.HasPrefix(n, ".") && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil || strings.HasPrefix(fn.Name.Name, "Benchmark") {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if c, ok := n.(*ast.CallExpr); ok {
					if arg := waitArg(c); arg != nil && fixedDuration(arg) {
						rel, _ := filepath.Rel(root, fset.Position(c.Pos()).Filename)
						bad = append(bad, rel+":"+strconv.Itoa(fset.Position(c.Pos()).Line))
					}
				}
				return true
			})
		}
		return nil
	})
	require.NoError(t, err)
	require.Empty(t, bad, "waits with a fixed bound: wrap it in shared.Wait(t, ...)")
}

// waitArg is the argument of c that bounds a wait, or nil when c is not
// a wait.
func waitArg(c *ast.CallExpr) ast.Expr {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return nil
	}
	pkg := ""
	if id, ok := sel.X.(*ast.Ident); ok {
		pkg = id.Name
	}
	at := func(i int) ast.Expr {
		if i < len(c.Args) {
			return c.Args[i]
		}
		return nil
	}
	switch {
	case (pkg == "require" || pkg == "assert") && (sel.Sel.Name == "Eventually" || sel.Sel.Name == "Eventuallyf" || sel.Sel.Name == "EventuallyWithT"):
		return at(2)
	case pkg == "time" && sel.Sel.Name == "After":
		return at(0)
	case pkg == "context" && sel.Sel.Name == "WithTimeout":
		return at(1)
	case sel.Sel.Name == "Add" && isTimeNow(sel.X):
		return at(0)
	}
	return nil
}

func isTimeNow(e ast.Expr) bool {
	c, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == "time" && sel.Sel.Name == "Now"
}

// fixedDuration: e is built of literals and time's units only, and is
// 1 s or more (a shorter fixed wait paces a fake or checks that nothing
// happens meanwhile: it does not catch a hang).
func fixedDuration(e ast.Expr) bool {
	d, ok := constDuration(e)
	return ok && d >= float64(time.Second)
}

// constDuration evaluates a duration written with literals, time's units
// and + - * /; ok is false for anything else.
func constDuration(e ast.Expr) (float64, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		v, err := strconv.ParseFloat(e.Value, 64)
		return v, err == nil
	case *ast.ParenExpr:
		return constDuration(e.X)
	case *ast.BinaryExpr:
		x, okx := constDuration(e.X)
		y, oky := constDuration(e.Y)
		if !okx || !oky {
			return 0, false
		}
		switch e.Op {
		case token.ADD:
			return x + y, true
		case token.SUB:
			return x - y, true
		case token.MUL:
			return x * y, true
		case token.QUO:
			return x / y, y != 0
		}
	case *ast.SelectorExpr:
		if id, ok := e.X.(*ast.Ident); ok && id.Name == "time" {
			u, ok := units[e.Sel.Name]
			return float64(u), ok
		}
	}
	return 0, false
}

var units = map[string]time.Duration{"Nanosecond": time.Nanosecond, "Microsecond": time.Microsecond,
	"Millisecond": time.Millisecond, "Second": time.Second, "Minute": time.Minute, "Hour": time.Hour}
