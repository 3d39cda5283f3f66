package chat

import "regexp"

// gonja parses a conditional expression (x if c else y) only as the whole
// of an output tag, not inside parentheses, which Gemma 3's template uses
// at the end of a concatenation:
//
//	{{ '<start_of_turn>' + role + '\n' + (first_user_prefix if loop.first else "") }}
//
// Such a trailing "+ (x if c else y)" is rewritten into a second output
// tag, {{ ... }}{{ x if c else y }}, which prints the same text.
var trailingConditional = regexp.MustCompile(`\+\s*\(([^(){}]*\sif\s[^(){}]*\selse\s[^(){}]*)\)\s*(-?\}\})`)

// compatSource returns source with the constructs gonja cannot parse
// rewritten into equivalent ones it can.
func compatSource(source string) string {
	return trailingConditional.ReplaceAllString(source, "}}{{ $1 $2")
}
