package version

import (
	"fmt"
	"strconv"
	"strings"
)

// Semver is a release number: MAJOR.MINOR.PATCH with an optional
// pre-release ("1.2.0-rc.1"), as the release tags (v1.2.0) carry it.
type Semver struct {
	Major, Minor, Patch int
	Pre                 string
}

// Parse reads "1.2.3", "v1.2.3" or "1.2.3-rc.1" (build metadata after
// "+" is ignored). "dev" and anything else is an error.
func Parse(s string) (Semver, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "v")
	s, _, _ = strings.Cut(s, "+")
	core, pre, _ := strings.Cut(s, "-")
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return Semver{}, fmt.Errorf("version %q: want MAJOR.MINOR.PATCH", s)
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 || len(p) > 9 {
			return Semver{}, fmt.Errorf("version %q: bad number %q", s, p)
		}
		n[i] = v
	}
	return Semver{n[0], n[1], n[2], pre}, nil
}

func (v Semver) String() string {
	s := fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch)
	if v.Pre != "" {
		s += "-" + v.Pre
	}
	return s
}

// Compare is -1, 0 or +1 as v is older than, the same as or newer than w.
// A pre-release is older than its release; pre-releases compare by
// their dot-separated fields (numeric ones as numbers), as semver says.
func (v Semver) Compare(w Semver) int {
	for _, d := range [3]int{v.Major - w.Major, v.Minor - w.Minor, v.Patch - w.Patch} {
		if d != 0 {
			return sign(d)
		}
	}
	switch {
	case v.Pre == w.Pre:
		return 0
	case v.Pre == "":
		return 1
	case w.Pre == "":
		return -1
	}
	a, b := strings.Split(v.Pre, "."), strings.Split(w.Pre, ".")
	for i := 0; i < len(a) && i < len(b); i++ {
		x, ex := strconv.Atoi(a[i])
		y, ey := strconv.Atoi(b[i])
		switch {
		case ex == nil && ey == nil:
			if x != y {
				return sign(x - y)
			}
		case ex == nil:
			return -1 // numeric fields sort before alphanumeric ones
		case ey == nil:
			return 1
		default:
			if c := strings.Compare(a[i], b[i]); c != 0 {
				return c
			}
		}
	}
	return sign(len(a) - len(b))
}

func sign(d int) int {
	switch {
	case d < 0:
		return -1
	case d > 0:
		return 1
	}
	return 0
}
