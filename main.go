// Command hunk applies patches, reads, writes, edits and runs commands inside
// a workspace, safely enough for coding agents, shell scripts and CI.
package main

import (
	"os"

	"github.com/hunk-dev/hunk/cmd"
)

func main() {
	os.Exit(cmd.Main(os.Args[1:]))
}
