package msltest

import (
	"fmt"
	"strings"

	"github.com/harkapp/hark/shaders/msl"
)

// generate turns the library sources into one C++ translation unit with a
// trampoline per kernel entry, and returns the entry names.
func generate(srcs []msl.Source) (string, []string, error) {
	tr, err := msl.Translate(srcs, msl.Dialect{Threadgroup: fiberThreadgroup})
	if err != nil {
		return "", nil, err
	}
	var out strings.Builder
	out.WriteString("#include \"msl.h\"\n")
	out.WriteString(tr.Body)
	var names []string
	out.WriteString("#line 1 \"msltest-trampolines.cpp\"\n")
	for i, e := range tr.Kernels {
		var args []string
		for _, p := range e.Params {
			a, err := executorArgs.ParamExpr(p)
			if err != nil {
				return "", nil, fmt.Errorf("kernel %s: %w", e.Name, err)
			}
			args = append(args, a)
		}
		fmt.Fprintf(&out, "static void __msl_k%d(const __msl_abi::Ctx* c, const __msl_abi::Ids* t) { (void)c; (void)t; %s(%s); }\n",
			i, e.Call, strings.Join(args, ", "))
		names = append(names, e.Name)
	}
	out.WriteString("extern \"C\" const __msl_abi::Entry msl_entries[] = {\n")
	for i, e := range tr.Kernels {
		fmt.Fprintf(&out, "    {%q, __msl_k%d},\n", e.Name, i)
	}
	if len(tr.Kernels) == 0 {
		out.WriteString("    {\"\", nullptr},\n")
	}
	fmt.Fprintf(&out, "};\nextern \"C\" const int msl_nentries = %d;\n", len(tr.Kernels))
	out.WriteString("extern \"C\" void msl_set_constants(const unsigned* v) {\n    (void)v;\n")
	for _, c := range tr.Constants {
		fmt.Fprintf(&out, "    %s = __msl::fc_cast<%s>(v[%d]);\n", c.Name, c.Type, c.Index)
	}
	out.WriteString("}\n")
	return out.String(), names, nil
}

// executorArgs are the trampolines' argument forms: abi.h's Ctx (c) and
// Ids (t) pointers.
var executorArgs = msl.ArgForms{Ids: "t->", Buffer: func(i int) string { return fmt.Sprintf("c->bufs[%d]", i) }, Dyn: "t->tg_dyn"}

// fiberThreadgroup makes a threadgroup declaration a reference into the
// executor's per-threadgroup arena (a plain C++ local would be per fiber).
func fiberThreadgroup(typ, name, dims string) string {
	if dims == "" {
		return fmt.Sprintf("threadgroup %s& %s = *(threadgroup %s*)__msl::msl_tg_alloc(sizeof(%s), alignof(%s));", typ, name, typ, typ, typ)
	}
	return fmt.Sprintf("threadgroup %s (&%s)%s = *(threadgroup %s(*)%s)__msl::msl_tg_alloc(sizeof(%s%s), alignof(%s%s));",
		typ, name, dims, typ, dims, typ, dims, typ, dims)
}
