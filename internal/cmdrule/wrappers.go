package cmdrule

import (
	"slices"
	"strings"
)

// What a command runs in its place: wrappers (env, timeout, xargs, ...)
// run the command after their options; shells run a string or their
// standard input; git's global options come before its subcommand; find
// runs the commands after -exec.

// wrapper is how a wrapper's words are read: which short options take a
// value, which long ones, how many operands come before the command.
type wrapper struct {
	values   string   // short options with a value (-n 5)
	long     []string // long options with a value (--unset NAME)
	operands int      // words before the command (timeout's duration)
	assigns  bool     // NAME=VALUE words before the command (env)
	noRun    string   // short options with which nothing runs (command -v)
	split    string   // short options that take a shell string (flock -c)
}

var wrappers = map[string]wrapper{
	"env":     {values: "uCS", long: []string{"--unset", "--chdir", "--split-string"}, assigns: true},
	"command": {noRun: "vV"},
	"builtin": {},
	"exec":    {values: "a"},
	"nice":    {values: "n", long: []string{"--adjustment"}},
	"nohup":   {},
	"setsid":  {},
	"time":    {values: "fo", long: []string{"--format", "--output"}},
	"stdbuf":  {values: "ioe", long: []string{"--input", "--output", "--error"}},
	"timeout": {values: "sk", long: []string{"--signal", "--kill-after"}, operands: 1},
	"sudo":    {values: "ugpChDrtUR", long: []string{"--user", "--group", "--prompt", "--close-from", "--host", "--chdir", "--role", "--type", "--other-user", "--chroot"}},
	"doas":    {values: "uC"},
	"xargs":   {values: "IinLPsdEa", long: []string{"--replace", "--max-args", "--max-lines", "--max-procs", "--max-chars", "--delimiter", "--eof", "--arg-file"}},
	"flock":   {values: "wE", long: []string{"--timeout", "--conflict-exit-code"}, operands: 1, split: "c"},
	"chroot":  {operands: 1},
	"ionice":  {values: "cnp"},
	"busybox": {},
	"watch":   {values: "nd", long: []string{"--interval", "--differences"}},
}

// shells run a string (-c), a file, or their standard input.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true, "fish": true, "yash": true, "posh": true}

// unwrap is the command a wrapper runs (ok false: name is no wrapper);
// reason says why it cannot be known before the run.
func unwrap(name string, ws []word) (inner []word, reason string, ok bool) {
	w, ok := wrappers[name]
	if !ok {
		return nil, "", false
	}
	i := 1
	for i < len(ws) {
		a := ws[i]
		if !a.lit {
			return nil, name + "'s arguments are known only when it runs", true
		}
		s := a.s
		if s == "--" {
			i++
			break
		}
		if !strings.HasPrefix(s, "-") || s == "-" {
			break
		}
		if strings.HasPrefix(s, "--") {
			long, _, hasValue := strings.Cut(s, "=")
			if name == "env" && long == "--split-string" {
				return nil, "env --split-string makes a command of a string", true
			}
			i++
			if !hasValue && slices.Contains(w.long, long) {
				i++
			}
			continue
		}
		// Short options, maybe several in one word; one with a value takes
		// the rest of the word, or the next word.
		i++
		for k := 1; k < len(s); k++ {
			c := s[k]
			switch {
			case strings.IndexByte(w.noRun, c) >= 0:
				return nil, "", true
			case name == "env" && c == 'S':
				return nil, "env -S makes a command of a string", true
			case strings.IndexByte(w.split, c) >= 0:
				str := s[k+1:]
				if str == "" && i < len(ws) {
					if !ws[i].lit {
						return nil, name + " -" + string(c) + " runs a string known only when it runs", true
					}
					str = ws[i].s
				}
				return []word{{s: "sh", lit: true}, {s: "-c", lit: true}, {s: str, lit: true}}, "", true
			case strings.IndexByte(w.values, c) >= 0:
				if k == len(s)-1 {
					i++ // the value is the next word
				}
				k = len(s)
			}
		}
	}
	for w.assigns && i < len(ws) && ws[i].lit && isAssign(ws[i].s) {
		if gitConfigVar(ws[i].s) {
			return nil, "GIT_CONFIG_* gives git settings (an alias) the line does not show", true
		}
		i++
	}
	i += w.operands
	if w.split != "" && i+1 < len(ws) && ws[i].lit && len(ws[i].s) == 2 && ws[i].s[0] == '-' && strings.IndexByte(w.split, ws[i].s[1]) >= 0 {
		// flock FILE -c STRING: the string after the operand.
		if !ws[i+1].lit {
			return nil, name + " " + ws[i].s + " runs a string known only when it runs", true
		}
		return []word{{s: "sh", lit: true}, {s: "-c", lit: true}, ws[i+1]}, "", true
	}
	if i >= len(ws) {
		return nil, "", true
	}
	if name == "watch" {
		// watch runs its words joined, with sh -c.
		var parts []string
		for _, a := range ws[i:] {
			if !a.lit {
				return nil, "watch's command is known only when it runs", true
			}
			parts = append(parts, a.s)
		}
		return []word{{s: "sh", lit: true}, {s: "-c", lit: true}, {s: strings.Join(parts, " "), lit: true}}, "", true
	}
	return ws[i:], "", true
}

// isAssign reports a NAME=VALUE word.
func isAssign(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return false
	}
	for i, c := range name {
		if c != '_' && (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// shellScript is what a shell runs: the string after -c, or its standard
// input when the line gives it (a here-document); ok false when it runs
// a file (then it is decided as the program it is). reason says why the
// script cannot be known before the run.
func shellScript(ws []word, stdin *word) (script, reason string, ok bool) {
	i, c, s := 1, false, false
	for i < len(ws) {
		a := ws[i]
		if !a.lit {
			return "", "the shell's arguments are known only when it runs", true
		}
		v := a.s
		if v == "--" || v == "-" {
			i++
			break
		}
		if !strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "+") {
			break
		}
		i++
		if strings.HasPrefix(v, "--") {
			if v == "--rcfile" || v == "--init-file" {
				i++
			}
			continue
		}
		if v[1:] == "o" || v[1:] == "O" {
			i++
			continue
		}
		c = c || strings.ContainsRune(v[1:], 'c')
		s = s || strings.ContainsRune(v[1:], 's')
	}
	switch {
	case c:
		if i >= len(ws) {
			return "", "", true
		}
		if !ws[i].lit {
			return "", "the shell runs a string known only when it runs", true
		}
		return ws[i].s, "", true
	case i < len(ws) && !s:
		return "", "", false // a script file
	case stdin == nil:
		return "", "a shell reading its commands from its standard input", true
	case !stdin.lit:
		return "", "a shell reading commands known only when it runs (" + stdin.s + ")", true
	}
	return stdin.s, "", true
}

// gitArgv is a git command with its global options (-C DIR, -c K=V,
// --git-dir ..., --no-pager) taken out, so that "git -C . push" is decided
// as "git push"; an alias set on the command line (-c alias.x=push) is
// asked about.
func gitArgv(ws []word) ([]word, string) {
	i := 1
	for i < len(ws) && ws[i].lit && strings.HasPrefix(ws[i].s, "-") {
		s := ws[i].s
		switch {
		case s == "-c" || s == "--config-env":
			if i+1 >= len(ws) || !ws[i+1].lit {
				return nil, "git's -c value is known only when it runs"
			}
			if strings.HasPrefix(strings.ToLower(ws[i+1].s), "alias.") {
				return nil, "git -c alias.… gives a command another name"
			}
			i += 2
		case strings.HasPrefix(strings.ToLower(s), "--config-env=alias."):
			return nil, "git --config-env=alias.… gives a command another name"
		case s == "-C" || s == "--git-dir" || s == "--work-tree" || s == "--namespace" || s == "--super-prefix":
			i += 2
		default:
			i++
		}
	}
	rest := ws[min(i, len(ws)):]
	if len(rest) > 0 && rest[0].lit && rest[0].s == "config" {
		// git config alias.p push (or --global, a file): the next git
		// p of the line is git push.
		for _, a := range rest[1:] {
			if !a.lit || strings.HasPrefix(strings.ToLower(a.s), "alias.") {
				return nil, "git config of an alias gives a command another name"
			}
		}
	}
	return append([]word{ws[0]}, rest...), ""
}

// findExecs are the commands find runs (-exec, -execdir, -ok, -okdir up
// to ";" or "+").
func findExecs(ws []word) [][]word {
	var out [][]word
	for k := 1; k < len(ws); k++ {
		switch ws[k].s {
		case "-exec", "-execdir", "-ok", "-okdir":
			start := k + 1
			for k++; k < len(ws) && !(ws[k].lit && (ws[k].s == ";" || ws[k].s == "+")); k++ {
			}
			out = append(out, ws[start:k])
		}
	}
	return out
}
