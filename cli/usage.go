package cli

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/spf13/cobra"
)

// exitUsage is the status of a command given wrong arguments or flags.
const exitUsage = 2

// usageError is a wrong argument or flag: run prints the command's usage
// line under the message.
type usageError struct {
	cmd *cobra.Command
	err error
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// withUsage makes the argument and flag errors of root's whole tree
// usageErrors, and checks the flags every command shares.
func withUsage(root *cobra.Command) {
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &usageError{c, err} })
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if args := c.Args; args != nil {
			c.Args = func(cc *cobra.Command, a []string) error {
				if err := args(cc, a); err != nil {
					return &usageError{cc, plainArgs(err)}
				}
				return nil
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	root.PersistentPreRunE = checkThreads
}

// checkThreads refuses a negative --threads (0 means one per physical
// core) before any work.
func checkThreads(cmd *cobra.Command, _ []string) error {
	f := cmd.Flags().Lookup("threads")
	if f == nil {
		return nil
	}
	if v, err := strconv.Atoi(f.Value.String()); err == nil && v < 0 {
		return &usageError{cmd, fmt.Errorf("--threads %d: want 0 (one per physical core) or more", v)}
	}
	return nil
}

// cobraArgs is cobra's wording for a wrong number of arguments.
var cobraArgs = regexp.MustCompile(`^accepts (\d+) arg\(s\), received (\d+)$`)

// plainArgs says cobra's argument-count errors in plain words.
func plainArgs(err error) error {
	if m := cobraArgs.FindStringSubmatch(err.Error()); m != nil {
		return fmt.Errorf("wrong number of arguments: want %s, got %s", m[1], m[2])
	}
	return err
}
