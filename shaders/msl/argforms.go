package msl

import "fmt"

// ArgForms says how a generated entry point reaches a kernel's arguments:
// the executor's trampolines and cuda/gen's entry points differ only
// here, and ParamExpr maps every Metal parameter attribute for both.
type ArgForms struct {
	Ids    string             // the thread ids (abi.h's Ids fields), as a member-access prefix: "t->" or "t."
	Buffer func(i int) string // the pointer of [[buffer(i)]], i in [0, 16)
	Dyn    string             // the pointer of [[threadgroup(0)]] memory
}

// ParamExpr is the C++ argument passing parameter p to a kernel.
func (f ArgForms) ParamExpr(p Param) (string, error) {
	t := f.Ids
	dim := func(v string) string { return fmt.Sprintf("__msl::Dim{%s%s[0], %s%s[1], %s%s[2]}", t, v, t, v, t, v) }
	switch p.Attr {
	case "buffer":
		if p.Index < 0 || p.Index >= 16 {
			return "", fmt.Errorf("buffer index %d out of range", p.Index)
		}
		if p.Ref {
			return "__msl::Ref{" + f.Buffer(p.Index) + "}", nil
		}
		return "__msl::Ptr{" + f.Buffer(p.Index) + "}", nil
	case "threadgroup":
		if p.Index != 0 {
			return "", fmt.Errorf("only [[threadgroup(0)]] is supported")
		}
		return "__msl::Ptr{" + f.Dyn + "}", nil
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
		return fmt.Sprintf("__msl::Dim{%[1]sngroups[0]*%[1]stpg[0], %[1]sngroups[1]*%[1]stpg[1], %[1]sngroups[2]*%[1]stpg[2]}", t), nil
	case "thread_index_in_threadgroup":
		return "__msl::Dim{" + t + "linear, 0, 0}", nil
	case "thread_index_in_simdgroup":
		return "__msl::Dim{" + t + "lane, 0, 0}", nil
	case "simdgroup_index_in_threadgroup":
		return "__msl::Dim{" + t + "simd, 0, 0}", nil
	case "simdgroups_per_threadgroup":
		return "__msl::Dim{" + t + "nsimd, 0, 0}", nil
	case "threads_per_simdgroup", "thread_execution_width":
		return "__msl::Dim{32, 0, 0}", nil
	}
	return "", fmt.Errorf("unsupported parameter attribute [[%s]]", p.Attr)
}
