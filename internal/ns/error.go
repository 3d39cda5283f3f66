// Package ns holds the Foundation plumbing that the macos packages and the
// Metal backend (metal/) share: loading system frameworks, NSString and
// NSData conversion, NSError to Go error, and autorelease pools. It lives
// under the module's internal/, not under macos/ or app/, so that both can
// import it. Only Error is platform independent.
package ns

import "fmt"

// Error is an NSError turned into a Go error. Description is the error's
// localizedDescription, the sentence macOS would show the user.
type Error struct {
	Domain      string
	Code        int
	Description string
}

func (e *Error) Error() string {
	switch {
	case e.Description == "" && e.Domain == "":
		return fmt.Sprintf("NSError code %d", e.Code)
	case e.Description == "":
		return fmt.Sprintf("%s error %d", e.Domain, e.Code)
	case e.Domain == "":
		return e.Description
	}
	return fmt.Sprintf("%s (%s %d)", e.Description, e.Domain, e.Code)
}
