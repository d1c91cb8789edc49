//go:build !linux

package egress

import (
	"fmt"
	"io"
)

// DoorMain: the door runs only in Linux sandboxes.
func DoorMain(args []string, stderr io.Writer) int {
	fmt.Fprintln(stderr, "hunk-egress: the egress door runs only inside a Linux sandbox")
	return 125
}
