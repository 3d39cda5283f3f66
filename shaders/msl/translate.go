package msl

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Translate is the MSL→C++ front end shared by the test executor
// (shaders/msltest) and the CUDA backend's generator (cuda/gen): it rewrites the sources into
// C++ for a compatibility header (comments stripped, attributes removed,
// vector constructors made calls, threadgroup declarations and function
// constants in the dialect's form) and lists the kernel entries with their
// parameters, so each target emits its own entry points.

// Param is one kernel parameter: its Metal attribute, the attribute's index
// (buffer(n), threadgroup(n); -1 when it has none) and whether it is bound
// by reference (constant Args& args [[buffer(8)]]).
type Param struct {
	Attr  string
	Index int
	Ref   bool
}

// Kernel is one entry point: its MSL name (the host_name of a template
// instance), the C++ expression naming the function, and its parameters.
type Kernel struct {
	Name   string
	Call   string
	Params []Param
}

// FuncConst is a function constant: `constant Type Name [[function_constant(Index)]];`.
type FuncConst struct {
	Type, Name string
	Index      int
}

// Dialect says how a target spells what plain C++ lacks. Threadgroup is
// required; a nil Constant gives a plain static variable.
type Dialect struct {
	// Threadgroup returns the declaration replacing `threadgroup typ name
	// dims;` in a kernel body (dims is "" or "[N]..."): shared storage of
	// the threadgroup.
	Threadgroup func(typ, name, dims string) string
	// Constant returns the declaration replacing a function constant.
	Constant func(c FuncConst) string
}

// Translation is the translated library.
type Translation struct {
	// Body is every source as C++, each after a #line directive naming it.
	Body      string
	Kernels   []Kernel // sorted by name
	Constants []FuncConst
}

type kernelDef struct {
	name     string
	template bool
	params   []Param
}

// Translate translates srcs (one library, in order) for dialect d.
func Translate(srcs []Source, d Dialect) (*Translation, error) {
	if d.Threadgroup == nil {
		return nil, errors.New("msl: the dialect has no Threadgroup form")
	}
	if d.Constant == nil {
		d.Constant = func(c FuncConst) string { return fmt.Sprintf("static %s %s;", c.Type, c.Name) }
	}
	var out strings.Builder
	tr := &Translation{}
	defs := map[string]*kernelDef{}
	type hostInst struct{ name, body, file string }
	var insts []hostInst
	for _, src := range srcs {
		s := stripComments(src.Text)
		s = reMetalInclude.ReplaceAllStringFunc(s, blank)
		// explicit instantiations named for the host
		s = reHostName.ReplaceAllStringFunc(s, func(m string) string {
			g := reHostName.FindStringSubmatch(m)
			insts = append(insts, hostInst{g[1], g[2], src.Name})
			return blank(m)
		})
		var cerr error
		s = reFuncConst.ReplaceAllStringFunc(s, func(m string) string {
			g := reFuncConst.FindStringSubmatch(m)
			idx, _ := strconv.Atoi(g[3])
			c := FuncConst{Type: g[1], Name: g[2], Index: idx}
			if idx < 0 || idx >= MaxConstants {
				cerr = fmt.Errorf("%s: function constant %s: index %d out of range", src.Name, c.Name, idx)
			}
			tr.Constants = append(tr.Constants, c)
			return keepLines(d.Constant(c), m)
		})
		if cerr != nil {
			return nil, cerr
		}
		for _, loc := range reKernel.FindAllStringSubmatchIndex(s, -1) {
			name := s[loc[2]:loc[3]]
			open := loc[1] - 1
			cl := matching(s, open)
			if cl < 0 {
				return nil, fmt.Errorf("%s: kernel %s: unbalanced parameter list", src.Name, name)
			}
			kd := &kernelDef{name: name, template: strings.HasSuffix(strings.TrimSpace(s[:loc[0]]), ">")}
			for _, ps := range splitTop(s[open+1 : cl]) {
				am := reAttr.FindStringSubmatch(ps)
				if am == nil {
					return nil, fmt.Errorf("%s: kernel %s: parameter %q has no attribute", src.Name, name, strings.TrimSpace(ps))
				}
				p := Param{Attr: am[1], Index: -1}
				if am[2] != "" {
					p.Index, _ = strconv.Atoi(am[2])
				}
				p.Ref = strings.Contains(ps[:strings.Index(ps, "[[")], "&")
				kd.params = append(kd.params, p)
			}
			if _, dup := defs[name]; dup {
				return nil, fmt.Errorf("%s: kernel %s defined twice", src.Name, name)
			}
			defs[name] = kd
			if !kd.template {
				tr.Kernels = append(tr.Kernels, Kernel{Name: name, Call: name, Params: kd.params})
			}
		}
		// vector constructors first: the declarations rewritten next
		// contain `float2 (&name)`, which is not a constructor
		s = reVecCtor.ReplaceAllString(s, "__msl::make<$1>(")
		s = rewriteThreadgroupDecls(s, d.Threadgroup)
		s = reAnyAttr.ReplaceAllStringFunc(s, blank)
		fmt.Fprintf(&out, "#line 1 %q\n%s\n", src.Name, s)
	}
	for _, in := range insts {
		call, def := "", (*kernelDef)(nil)
		for name, kd := range defs {
			re := regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\s*<`)
			if loc := re.FindStringIndex(in.body); loc != nil && kd.template {
				cl := matching(in.body, loc[1]-1)
				if cl < 0 {
					return nil, fmt.Errorf("%s: host_name %q: unbalanced template arguments", in.file, in.name)
				}
				call, def = in.body[loc[0]:cl+1], kd
			}
		}
		if def == nil {
			return nil, fmt.Errorf("%s: host_name %q does not instantiate a known kernel template", in.file, in.name)
		}
		tr.Kernels = append(tr.Kernels, Kernel{Name: in.name, Call: call, Params: def.params})
	}
	sort.Slice(tr.Kernels, func(i, j int) bool { return tr.Kernels[i].Name < tr.Kernels[j].Name })
	for i := 1; i < len(tr.Kernels); i++ {
		if tr.Kernels[i-1].Name == tr.Kernels[i].Name {
			return nil, fmt.Errorf("kernel %s defined twice", tr.Kernels[i].Name)
		}
	}
	tr.Body = out.String()
	return tr, nil
}
