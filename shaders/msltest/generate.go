package msltest

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Source is one .metal file of a library.
type Source struct {
	Name string
	Text string
}

// param is one kernel parameter: its Metal attribute and whether it is
// bound by reference (constant Args& args [[buffer(8)]]).
type param struct {
	attr  string
	index int
	ref   bool
}

type kernelDef struct {
	name     string
	template bool
	params   []param
}

type entry struct {
	name string // MSL function name (host_name for template instances)
	call string // C++ expression naming the function
	def  *kernelDef
}

type funcConst struct {
	typ, name string
	index     int
}

var (
	reMetalInclude = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*include[ \t]*<metal_\w+>.*$`)
	reHostName     = regexp.MustCompile(`template\s*\[\[\s*host_name\s*\(\s*"([^"]+)"\s*\)\s*\]\]([^;]*);`)
	reFuncConst    = regexp.MustCompile(`constant\s+([\w:]+)\s+(\w+)\s*\[\[\s*function_constant\s*\(\s*(\d+)\s*\)\s*\]\]\s*;`)
	reKernel       = regexp.MustCompile(`\bkernel\s+void\s+(\w+)\s*\(`)
	reAttr         = regexp.MustCompile(`\[\[\s*(\w+)\s*(?:\(\s*(\d+)\s*\))?\s*\]\]`)
	reAnyAttr      = regexp.MustCompile(`\[\[[^\[\]]*\]\]`)
	reVecCtor      = regexp.MustCompile(`\b((?:packed_)?(?:float|half|int|uint|short|ushort|char|uchar|long|ulong)[234])\s*\(`)
	reThreadgroup  = regexp.MustCompile(`\bthreadgroup\b`)
	reIdent        = regexp.MustCompile(`[A-Za-z_]\w*$`)
)

// stripComments blanks comments, keeping newlines so line numbers hold.
func stripComments(s string) string {
	b := []byte(s)
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '"' || b[i] == '\'':
			q := b[i]
			for i++; i < len(b) && b[i] != q && b[i] != '\n'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '/':
			for ; i < len(b) && b[i] != '\n'; i++ {
				b[i] = ' '
			}
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '*':
			b[i], b[i+1] = ' ', ' '
			for i += 2; i < len(b) && !(b[i] == '*' && i+1 < len(b) && b[i+1] == '/'); i++ {
				if b[i] != '\n' {
					b[i] = ' '
				}
			}
			if i+1 < len(b) {
				b[i], b[i+1] = ' ', ' '
				i++
			}
		}
	}
	return string(b)
}

// blank replaces s with spaces, keeping its newlines.
func blank(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' {
			return r
		}
		return ' '
	}, s)
}

// keepLines appends s's newlines to r so a rewrite spans as many lines.
func keepLines(r, s string) string { return r + strings.Repeat("\n", strings.Count(s, "\n")) }

// matching returns the index of the bracket closing the one at open.
func matching(s string, open int) int {
	pairs := map[byte]byte{'(': ')', '[': ']', '{': '}', '<': '>'}
	want := []byte{pairs[s[open]]}
	for i := open + 1; i < len(s); i++ {
		c := s[i]
		if c == want[len(want)-1] {
			want = want[:len(want)-1]
			if len(want) == 0 {
				return i
			}
			continue
		}
		if cl, ok := pairs[c]; ok && (c != '<' || s[open] == '<') {
			want = append(want, cl)
		}
	}
	return -1
}

// splitTop splits s at commas outside brackets.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[', '{', '<':
			depth++
		case ')', ']', '}', '>':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	if strings.TrimSpace(s[start:]) != "" {
		out = append(out, s[start:])
	}
	return out
}

// generate turns the library sources into one C++ translation unit with a
// trampoline per kernel entry, and returns the entry names.
func generate(srcs []Source) (string, []string, error) {
	var out strings.Builder
	out.WriteString("#include \"msl.h\"\n")
	defs := map[string]*kernelDef{}
	var entries []entry
	var consts []funcConst
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
		// function constants become globals set before each launch
		s = reFuncConst.ReplaceAllStringFunc(s, func(m string) string {
			g := reFuncConst.FindStringSubmatch(m)
			idx, _ := strconv.Atoi(g[3])
			consts = append(consts, funcConst{g[1], g[2], idx})
			return keepLines(fmt.Sprintf("static %s %s;", g[1], g[2]), m)
		})
		for _, loc := range reKernel.FindAllStringSubmatchIndex(s, -1) {
			name := s[loc[2]:loc[3]]
			open := loc[1] - 1
			cl := matching(s, open)
			if cl < 0 {
				return "", nil, fmt.Errorf("%s: kernel %s: unbalanced parameter list", src.Name, name)
			}
			d := &kernelDef{name: name, template: strings.HasSuffix(strings.TrimSpace(s[:loc[0]]), ">")}
			for _, ps := range splitTop(s[open+1 : cl]) {
				am := reAttr.FindStringSubmatch(ps)
				if am == nil {
					return "", nil, fmt.Errorf("%s: kernel %s: parameter %q has no attribute", src.Name, name, strings.TrimSpace(ps))
				}
				p := param{attr: am[1], index: -1}
				if am[2] != "" {
					p.index, _ = strconv.Atoi(am[2])
				}
				p.ref = strings.Contains(ps[:strings.Index(ps, "[[")], "&")
				d.params = append(d.params, p)
			}
			if _, dup := defs[name]; dup {
				return "", nil, fmt.Errorf("%s: kernel %s defined twice", src.Name, name)
			}
			defs[name] = d
			if !d.template {
				entries = append(entries, entry{name: name, call: name, def: d})
			}
		}
		// vector constructors first: the declarations rewritten next
		// contain `float2 (&name)`, which is not a constructor
		s = reVecCtor.ReplaceAllString(s, "__msl::make<$1>(")
		s = rewriteThreadgroupDecls(s)
		s = reAnyAttr.ReplaceAllStringFunc(s, blank)
		fmt.Fprintf(&out, "#line 1 %q\n%s\n", src.Name, s)
	}
	for _, in := range insts {
		call, def := "", (*kernelDef)(nil)
		for name, d := range defs {
			re := regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\s*<`)
			if loc := re.FindStringIndex(in.body); loc != nil && d.template {
				cl := matching(in.body, loc[1]-1)
				if cl < 0 {
					return "", nil, fmt.Errorf("%s: host_name %q: unbalanced template arguments", in.file, in.name)
				}
				call, def = in.body[loc[0]:cl+1], d
			}
		}
		if def == nil {
			return "", nil, fmt.Errorf("%s: host_name %q does not instantiate a known kernel template", in.file, in.name)
		}
		entries = append(entries, entry{name: in.name, call: call, def: def})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
	var names []string
	out.WriteString("#line 1 \"msltest-trampolines.cpp\"\n")
	for i, e := range entries {
		if i > 0 && entries[i-1].name == e.name {
			return "", nil, fmt.Errorf("kernel %s defined twice", e.name)
		}
		var args []string
		for _, p := range e.def.params {
			a, err := paramExpr(p)
			if err != nil {
				return "", nil, fmt.Errorf("kernel %s: %w", e.name, err)
			}
			args = append(args, a)
		}
		fmt.Fprintf(&out, "static void __msl_k%d(const __msl_abi::Ctx* c, const __msl_abi::Ids* t) { (void)c; (void)t; %s(%s); }\n",
			i, e.call, strings.Join(args, ", "))
		names = append(names, e.name)
	}
	out.WriteString("extern \"C\" const __msl_abi::Entry msl_entries[] = {\n")
	for i, e := range entries {
		fmt.Fprintf(&out, "    {%q, __msl_k%d},\n", e.name, i)
	}
	if len(entries) == 0 {
		out.WriteString("    {\"\", nullptr},\n")
	}
	fmt.Fprintf(&out, "};\nextern \"C\" const int msl_nentries = %d;\n", len(entries))
	out.WriteString("extern \"C\" void msl_set_constants(const unsigned* v) {\n    (void)v;\n")
	for _, c := range consts {
		if c.index < 0 || c.index >= maxConstants {
			return "", nil, fmt.Errorf("function constant %s: index %d out of range", c.name, c.index)
		}
		fmt.Fprintf(&out, "    %s = __msl::fc_cast<%s>(v[%d]);\n", c.name, c.typ, c.index)
	}
	out.WriteString("}\n")
	return out.String(), names, nil
}

const maxConstants = 64

func paramExpr(p param) (string, error) {
	dim := func(f string) string { return fmt.Sprintf("__msl::Dim{t->%s[0], t->%s[1], t->%s[2]}", f, f, f) }
	switch p.attr {
	case "buffer":
		if p.index < 0 || p.index >= 16 {
			return "", fmt.Errorf("buffer index %d out of range", p.index)
		}
		if p.ref {
			return fmt.Sprintf("__msl::Ref{c->bufs[%d]}", p.index), nil
		}
		return fmt.Sprintf("__msl::Ptr{c->bufs[%d]}", p.index), nil
	case "threadgroup":
		if p.index != 0 {
			return "", fmt.Errorf("only [[threadgroup(0)]] is supported")
		}
		return "__msl::Ptr{t->tg_dyn}", nil
	case "thread_position_in_grid":
		return dim("gid"), nil
	case "thread_position_in_threadgroup":
		return dim("tid"), nil
	case "threadgroup_position_in_grid":
		return dim("group"), nil
	case "threads_per_threadgroup", "dispatch_threads_per_threadgroup":
		return dim("tpg"), nil
	case "threadgroups_per_grid":
		return dim("ngroups"), nil
	case "threads_per_grid":
		return "__msl::Dim{t->ngroups[0]*t->tpg[0], t->ngroups[1]*t->tpg[1], t->ngroups[2]*t->tpg[2]}", nil
	case "thread_index_in_threadgroup":
		return "__msl::Dim{t->linear, 0, 0}", nil
	case "thread_index_in_simdgroup":
		return "__msl::Dim{t->lane, 0, 0}", nil
	case "simdgroup_index_in_threadgroup":
		return "__msl::Dim{t->simd, 0, 0}", nil
	case "simdgroups_per_threadgroup":
		return "__msl::Dim{t->nsimd, 0, 0}", nil
	case "threads_per_simdgroup", "thread_execution_width":
		return "__msl::Dim{32, 0, 0}", nil
	}
	return "", fmt.Errorf("unsupported parameter attribute [[%s]]", p.attr)
}

// rewriteThreadgroupDecls turns `threadgroup T name[N];` declarations into
// references to per-threadgroup storage, so all threads of a threadgroup
// share them (a plain C++ local would be per thread).
func rewriteThreadgroupDecls(s string) string {
	var b strings.Builder
	last := 0
	for _, loc := range reThreadgroup.FindAllStringIndex(s, -1) {
		if loc[0] < last {
			continue
		}
		i := loc[1]
		stop := byte(0)
		for ; i < len(s); i++ {
			c := s[i]
			if c == '[' {
				if j := matching(s, i); j > 0 {
					i = j
					continue
				}
			}
			if strings.IndexByte(";(){},=*&", c) >= 0 {
				stop = c
				break
			}
		}
		if stop != ';' {
			continue
		}
		decl := s[loc[1]:i]
		dims := ""
		head := decl
		if k := strings.IndexByte(decl, '['); k >= 0 {
			head, dims = decl[:k], strings.TrimSpace(decl[k:])
		}
		head = strings.TrimSpace(head)
		name := reIdent.FindString(head)
		typ := strings.TrimSpace(strings.TrimSuffix(head, name))
		if name == "" || typ == "" {
			continue
		}
		var rep string
		if dims == "" {
			rep = fmt.Sprintf("threadgroup %s& %s = *(threadgroup %s*)__msl::msl_tg_alloc(sizeof(%s), alignof(%s));", typ, name, typ, typ, typ)
		} else {
			rep = fmt.Sprintf("threadgroup %s (&%s)%s = *(threadgroup %s(*)%s)__msl::msl_tg_alloc(sizeof(%s%s), alignof(%s%s));",
				typ, name, dims, typ, dims, typ, dims, typ, dims)
		}
		b.WriteString(s[last:loc[0]])
		b.WriteString(keepLines(rep, s[loc[0]:i+1]))
		last = i + 1
	}
	b.WriteString(s[last:])
	return b.String()
}
