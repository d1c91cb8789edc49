package execrun

// Check is how a change's check went (--verify, a tool call's verify: the
// command run in the sandbox after the change, package verify), as the
// change's result reports it.
type Check struct {
	Command  string `json:"command" jsonschema:"the check that ran"`
	ExitCode int    `json:"exitCode" jsonschema:"the check's exit code (0: it passed)"`
	Kept     bool   `json:"kept" jsonschema:"the change is in the files; false: the check failed and the change was taken back"`
	// RolledBack are the files a failed check's rollback restored;
	// LeftAlone those changed meanwhile by someone else, left as they are.
	RolledBack []string `json:"rolledBack,omitempty" jsonschema:"the files taken back to how they were before the change"`
	LeftAlone  []string `json:"leftAlone,omitempty" jsonschema:"files changed while the check ran, left as they are (each with how it changed)"`
	UndoID     string   `json:"undoId,omitempty" jsonschema:"the rollback's id in the history"`
	Run        *Details `json:"run,omitempty" jsonschema:"the check's run: exit code, each stream's head and tail, outputId for the rest"`
	// Files and Diagnostics, for a configured check (checks: in the
	// config): the changed files it ran for, and what it found in them.
	Files       []string     `json:"files,omitempty" jsonschema:"a configured check: the changed files it ran for"`
	Diagnostics []Diagnostic `json:"diagnostics,omitempty" jsonschema:"a configured check: its findings, where its output gives a file and line"`
}

// Diagnostic is one finding of a configured check, as its output gives
// it (path:line[:column]: message, Python's File "path", line N).
type Diagnostic struct {
	File    string `json:"file" jsonschema:"the file the finding is in"`
	Line    int    `json:"line,omitempty" jsonschema:"its line (1-based)"`
	Column  int    `json:"column,omitempty" jsonschema:"its column (1-based)"`
	Message string `json:"message" jsonschema:"what the check says"`
}
