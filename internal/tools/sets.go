package tools

import (
	"strings"

	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/sandbox"
)

// The tool sets are rows of one table: what a set is called, what it
// holds, the words its failures' hints are said in. Every surface reads
// it — hunk mcp's and hunk serve's --tools, hunk tools' declarations,
// hunk call's lookups — so a set is added in one place, and a tool's name
// is one tool's in every set (TestSetNamesAreOneTools).

// SetDef is one tool set, a row of the table.
type SetDef struct {
	Name    string // as --tools names it
	Summary string // what --help says it holds
	// make builds its tools (exec's description says the session's
	// network); answers are tools it answers but does not declare.
	make    func(sandbox.Network) Set
	answers func() Set
	// words rewrites a failure's hints into the words of its tools.
	words *strings.Replacer
}

// setTable is every tool set, in the order hunk call looks a name up.
var setTable = []SetDef{
	{Name: "hunk", Summary: "apply_patch, read, search, write, edit, undo, exec",
		make: Hunk, answers: func() Set { return Set{Insert()} }, words: hunkWords},
	{Name: "filesystem", Summary: "the reference MCP filesystem server's tools",
		make: func(sandbox.Network) Set { return Filesystem() }, words: filesystemWords},
}

// Sets are the table's rows.
func Sets() []SetDef { return setTable }

// SetNames are the sets' names, for help and errors.
func SetNames() []string {
	var names []string
	for _, d := range setTable {
		names = append(names, d.Name)
	}
	return names
}

// setDef is the row named name, or nil.
func setDef(name string) *SetDef {
	for i := range setTable {
		if setTable[i].Name == name {
			return &setTable[i]
		}
	}
	return nil
}

// Tools are the set's declared tools.
func (d *SetDef) Tools(network sandbox.Network) Set { return d.make(network) }

// Named is the set called name: its declared tools, or a usage error
// naming the sets there are.
func Named(name string, network sandbox.Network) (Set, error) {
	d := setDef(name)
	if d == nil {
		return nil, result.Usagef("--tools must be %s, not %q", strings.Join(SetNames(), " or "), name)
	}
	return d.Tools(network), nil
}

// All is every tool of every set, declared or answered, in the table's
// order: what hunk call answers when no surface narrows it.
func All(network sandbox.Network) Set {
	var all Set
	for i := range setTable {
		d := &setTable[i]
		all = append(all, d.Tools(network)...)
		if d.answers != nil {
			all = append(all, d.answers()...)
		}
	}
	return all
}

// words is the replacer of t's set (hunk's for a tool of none).
func (t *Tool) words() *strings.Replacer {
	if d := setDef(t.set); d != nil && d.words != nil {
		return d.words
	}
	return hunkWords
}
