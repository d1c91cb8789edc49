package main

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/hunk-dev/hunk/cmd"
)

// TestMain registers the real main as the commands the scripts run: hunk, and
// the Codex-compatible links apply_patch and applypatch.
func TestMain(m *testing.M) {
	main := func() { os.Exit(cmd.Main(os.Args[1:])) }
	testscript.Main(m, map[string]func(){
		"hunk":        main,
		"apply_patch": main,
		"applypatch":  main,
	})
}

// TestScripts runs every testdata/scripts/*.txtar against the real binary.
// HUNK_SCRIPTS=pattern runs only the scripts whose name contains pattern.
func TestScripts(t *testing.T) {
	testscript.Run(t, scriptParams("testdata/scripts"))
}
