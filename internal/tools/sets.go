package tools

import (
	"cmp"
	"slices"
	"strings"

	"github.com/hunk-dev/hunk/internal/history"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/sandbox"
)

// The tool sets are rows of one table: what a set is called, what it
// holds, the words its failures' hints are said in. Every surface reads
// it — hunk mcp's and hunk serve's --tools, hunk tools' declarations,
// hunk call's lookups — so a set is added in one place. A name is one
// tool's, but for a provider's own set (SetDef.Own): its tools keep the
// names that provider gives them (Gemini's read_file, the filesystem
// set's read_file), and a call is looked up by its shape's set first
// (Set.Find); a surface that serves tools by name alone (MCP, hunk tools)
// serves one of the twins (Selection.Twins; TestSetNamesAreOneTools).

// SetDef is one tool set, a row of the table.
type SetDef struct {
	Name    string // as --tools names it
	Summary string // what --help says it holds ("": its tools' names)
	// make builds its tools (exec's description says the session's
	// network); answers are tools it answers but does not declare. names
	// and answerNames are their names, known without building them (a
	// tool's schemas are inferred when it is built: milliseconds, on
	// every start of hunk call; TestSetNamesAreOneTools holds them equal).
	make               func(sandbox.Network) Set
	answers            func() Set
	names, answerNames []string
	// words rewrites a failure's hints into the words of its tools.
	words *strings.Replacer
	// Own: the set is a provider's own tools, named as that provider
	// names them, a name another set has too included; a bare tool name
	// in --tools is the other set's (name the set to serve its own).
	Own bool
}

// setTable is every tool set, in the order hunk call looks a name up.
var setTable = []SetDef{
	{Name: "hunk",
		make: Hunk, answers: func() Set { return Set{Insert()} }, words: hunkWords,
		names:       []string{"apply_patch", "read", "search", "write", "edit", "undo", "exec"},
		answerNames: []string{"insert"}},
	{Name: "filesystem", Summary: "the reference MCP filesystem server's tools",
		make: func(sandbox.Network) Set { return Filesystem() }, words: filesystemWords,
		names: []string{"read_file", "read_text_file", "read_media_file", "read_multiple_files", "write_file", "edit_file", "create_directory",
			"list_directory", "list_directory_with_sizes", "directory_tree", "move_file", "search_files", "get_file_info", "list_allowed_directories"}},
	{Name: "claude-code", Summary: "Claude Code's file tools: Read, Write, Edit, MultiEdit",
		make: func(sandbox.Network) Set { return ClaudeCode() }, words: claudeCodeWords,
		names: []string{"Read", "Write", "Edit", "MultiEdit"}},
	{Name: "openhands", Summary: "OpenHands' file tool: str_replace_editor",
		make: func(sandbox.Network) Set { return OpenHands() }, words: claudeCodeWords,
		names: []string{"str_replace_editor"}},
	{Name: "gemini", Summary: "Gemini CLI's file tools: read_file, write_file, replace", Own: true,
		make: func(sandbox.Network) Set { return Gemini() }, words: geminiWords,
		names: []string{"read_file", "write_file", "replace"}},
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

// Said is what --help says the set holds.
func (d *SetDef) Said() string { return cmp.Or(d.Summary, strings.Join(d.names, ", ")) }

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

// toolKey is one tool of the table: its set's name and its own.
type toolKey struct{ set, name string }

// keys are the set's declared tools (a tool it only answers, as hunk's
// insert, is served when it is named).
func (d *SetDef) keys() []toolKey {
	var ks []toolKey
	for _, n := range d.names {
		ks = append(ks, toolKey{d.Name, n})
	}
	return ks
}

// Twins refuses a selection that holds two tools of one name (a
// provider's own set beside another with that name): a surface that
// names a tool by its name alone (MCP's tools/list, hunk tools) serves
// one of them. hunk call, which looks a call up by its shape, holds both.
func (sel *Selection) Twins() error {
	seen := map[string]string{}
	for _, t := range sel.Set {
		if other, ok := seen[t.Name]; ok && other != t.set {
			return result.Usagef("--tools %q: %s is a tool of the %s set and of the %s set, and a client calls a tool by its name alone", sel.Spec, t.Name, other, t.set).
				WithHint("serve one of the two sets (hunk call, which tells a call's shape, answers both)")
		}
		seen[t.Name] = t.set
	}
	return nil
}

// Find is the tool named name of the set prefer when s has it, else the
// first by that name: a call in a provider's own shape runs that
// provider's tool.
func (s Set) Find(name, prefer string) *Tool {
	for _, t := range s {
		if t.Name == name && t.set == prefer {
			return t
		}
	}
	return s.Lookup(name)
}

// isTool reports whether name is a tool of hunk's, of any set.
func isTool(name string) bool { return slices.Contains(allNames(), name) }

// allNames are every tool's name, in the table's order.
func allNames() []string {
	var all []string
	for _, d := range setTable {
		for _, n := range append(slices.Clone(d.names), d.answerNames...) {
			if !slices.Contains(all, n) {
				all = append(all, n)
			}
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

// Selection is what a surface serves: the tools --tools (or tools.enable)
// names, less those tools.disable turns off, and why the others are not
// served, for the refusal of a call of one.
type Selection struct {
	Set
	// Disabled are the tools tools.disable turns off, and where it is set.
	Disabled []string
	From     string
	// Spec is --tools as given ("" when it was not).
	Spec string
	// hidden are the selected tools the path policy leaves nothing to
	// do (Narrow), with the rule that says so.
	hidden map[string]string
}

// Narrow takes away the tools the path policy leaves nothing to do: a
// rule that denies writing the whole workspace (noWrite, the rule as
// said) takes every tool that changes files, one that denies reading it
// (noRead) every file tool; exec stays, its commands confined by the
// sandbox. A call of one is refused naming the rule.
func (sel *Selection) Narrow(noWrite, noRead string) {
	if noWrite == "" && noRead == "" {
		return
	}
	var kept Set
	for _, t := range sel.Set {
		why := ""
		switch {
		case t.command:
		case noRead != "":
			why = "the path policy denies reading every path (" + noRead + ")"
		case noWrite != "" && !t.ReadOnly:
			why = "the path policy denies writing every path (" + noWrite + ")"
		}
		if why == "" {
			kept = append(kept, t)
			continue
		}
		if sel.hidden == nil {
			sel.hidden = map[string]string{}
		}
		sel.hidden[t.Name] = why
	}
	sel.Set = kept
}

// Select reads a --tools value: a set's name, a tool's, or a list of them
// ("read,search,edit"), each "-NAME" taking a tool or a set away
// ("hunk,-exec"; a list that starts by taking away starts from hunk).
// disable are tools.disable's names (from: where it is set), taken away
// whatever spec says. A name that is no set's and no tool's is a usage
// error naming what there is, and so is a selection left with no tool.
func Select(spec string, disable []string, from string, network sandbox.Network) (*Selection, error) {
	// names are the tools item names: a set's, or a tool's — to serve,
	// the first set's (in the table's order) that has it, to take away,
	// every set's.
	names := func(item, what string, off bool) ([]toolKey, error) {
		var keys []toolKey
		for _, d := range setTable {
			switch {
			case d.Name == item:
				return d.keys(), nil
			case len(keys) > 0 && !off:
			case slices.Contains(d.names, item) || slices.Contains(d.answerNames, item):
				keys = append(keys, toolKey{d.Name, item})
			}
		}
		if len(keys) > 0 {
			return keys, nil
		}
		return nil, result.Usagef("%s: %q is no tool set and no tool", what, item).
			WithHint("sets: " + strings.Join(SetNames(), ", ") + "; tools: " + strings.Join(allNames(), ", "))
	}
	on := map[toolKey]bool{}
	items := strings.Split(cmp.Or(strings.TrimSpace(spec), "hunk"), ",")
	if strings.HasPrefix(strings.TrimSpace(items[0]), "-") {
		items = append([]string{"hunk"}, items...)
	}
	for _, item := range items {
		item = strings.TrimSpace(item)
		off := strings.HasPrefix(item, "-")
		item = strings.TrimPrefix(item, "-")
		if item == "" {
			return nil, result.Usagef("--tools %q: an empty name", spec).WithHint("name sets or tools, separated by commas: --tools read,search,edit or --tools hunk,-exec")
		}
		ks, err := names(item, "--tools", off)
		if err != nil {
			return nil, err
		}
		for _, k := range ks {
			on[k] = !off
		}
	}
	sel := &Selection{Spec: spec, From: from}
	for _, item := range disable {
		ks, err := names(strings.TrimSpace(item), "tools.disable in "+cmp.Or(from, "the configuration"), true)
		if err != nil {
			return nil, err
		}
		for _, k := range ks {
			on[k] = false
			if !slices.Contains(sel.Disabled, k.name) {
				sel.Disabled = append(sel.Disabled, k.name)
			}
		}
	}
	// Only the sets a selected tool is of are built.
	for i := range setTable {
		d := &setTable[i]
		pick := func(names []string, build func() Set) {
			if slices.ContainsFunc(names, func(n string) bool { return on[toolKey{d.Name, n}] }) {
				for _, t := range build() {
					if on[toolKey{d.Name, t.Name}] {
						sel.Set = append(sel.Set, t)
					}
				}
			}
		}
		pick(d.names, func() Set { return d.Tools(network) })
		if d.answers != nil {
			pick(d.answerNames, d.answers)
		}
	}
	if len(sel.Set) == 0 {
		return nil, result.Usagef("--tools %q serves no tool", spec).WithHint("name at least one set or tool; tools.disable takes away " + strings.Join(sel.Disabled, ", "))
	}
	return sel, nil
}

// Refuse is the refusal of a call of the tool name that the selection
// does not serve: TOOL_DISABLED, saying how the person running hunk
// serves it; nil when it is served, or is no tool of hunk's (the caller's
// "unknown tool").
func (sel *Selection) Refuse(name string) error {
	if sel == nil || sel.Lookup(name) != nil || !isTool(name) {
		return nil
	}
	if why, ok := sel.hidden[name]; ok {
		return result.Errorf(result.ToolDisabled, "%s is not served here: %s, so it could change nothing", name, why).
			WithHint("the person running hunk sets the policy; the tools served: " + strings.Join(sel.Names(), ", "))
	}
	e := result.Errorf(result.ToolDisabled, "%s is not served here: the person running hunk has turned it off", name)
	if slices.Contains(sel.Disabled, name) {
		return e.WithHint("tools.disable in " + cmp.Or(sel.From, "the configuration") + " turns it off; the tools served: " + strings.Join(sel.Names(), ", "))
	}
	return e.WithHint("the tools served: " + strings.Join(sel.Names(), ", ") + " (the person running hunk chooses them with --tools, or tools.enable in the config)")
}

// Guard is the check every call passes before its tool runs, whatever its
// surface and shape: a tool the session does not serve is TOOL_DISABLED
// (Selection.Refuse), and the refusal goes to the audit trail.
func (s *Session) Guard(name string) error {
	err := s.Tools.Refuse(name)
	if err != nil && s.Env != nil && s.Env.Workspace != nil {
		if st, herr := s.Env.Workspace.History(); herr == nil {
			_ = st.Decided(history.Decision{Session: s.Env.Session, Tool: name, Decision: history.Disabled, By: result.As(err).Msg})
		}
	}
	if err == nil && s.Env != nil && s.Env.Workspace != nil {
		// A workspace replaced under a long-lived server: say so, not
		// NOT_FOUND for files that are there.
		err = s.Env.Workspace.Replaced()
	}
	return err
}
