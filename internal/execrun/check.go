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
}
