package cmd

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// The keys a config file may set, and the HUNK_* variables hunk reads: a
// key or a variable hunk does not know is a typo that would silently drop
// what it was written to set (a policy rule, a sandbox driver), so a
// config file's is an error and a variable's a warning, each naming the
// nearest one hunk knows.

// configOnlyKeys are keys with no default (their zero is the default).
var configOnlyKeys = []string{"fsync", "policy.read.deny", "policy.write.deny", "policy.write.allow", "policy.write.ask", "exec.rules", "tools.custom", "tools.timeout", "checks"}

// configKeys are every key of the configuration, and its sections.
func configKeys() (keys, sections map[string]bool) {
	keys, sections = map[string]bool{}, map[string]bool{}
	add := func(k string) {
		keys[k] = true
		for i := strings.LastIndexByte(k, '.'); i > 0; i = strings.LastIndexByte(k[:i], '.') {
			sections[k[:i]] = true
		}
	}
	for k := range defaults {
		add(k)
	}
	for _, k := range configOnlyKeys {
		add(k)
	}
	return keys, sections
}

// checkConfigKeys refuses a config file (its text) that sets a key hunk
// does not know, or gives a section a value: INVALID_ARGUMENT (exit 2)
// naming the file, the line and the nearest known key. A file that is not
// YAML is left to the config reader to refuse.
func checkConfigKeys(file string, text []byte) error {
	var doc yaml.Node
	if yaml.Unmarshal(text, &doc) != nil || len(doc.Content) == 0 {
		return nil
	}
	keys, sections := configKeys()
	var walk func(n *yaml.Node, prefix string) error
	walk = func(n *yaml.Node, prefix string) error {
		if n.Kind != yaml.MappingNode {
			return nil
		}
		seen := map[string]int{} // a key's line, for one set twice
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			key := k.Value
			if prefix != "" {
				key = prefix + "." + key
			}
			if line, ok := seen[key]; ok {
				return result.Usagef("config file %s:%d: %q is set twice (also on line %d): one would silently replace the other", file, k.Line, key, line).
					WithHint("keep one of them")
			}
			seen[key] = k.Line
			switch lower := strings.ToLower(key); {
			case lower != key && (keys[lower] || sections[lower]):
				// Keys are case-sensitive: hunk's readers would read one
				// spelling and drop the other (a policy rule silently not
				// applied), so another case is refused, naming the key.
				return result.Usagef("config file %s:%d: %q is written in another case: the key is %q", file, k.Line, key, lower).
					WithHint(fmt.Sprintf("write it %q (every key is lower case)", lower))
			case sections[key] && v.Kind == yaml.MappingNode:
				if err := walk(v, key); err != nil {
					return err
				}
			case sections[key]:
				return result.Usagef("config file %s:%d: %q is a section of keys, not a value", file, k.Line, key).
					WithHint(fmt.Sprintf("its keys: %s", strings.Join(under(keys, key), ", ")))
			case !keys[key]:
				e := result.Usagef("config file %s:%d: unknown key %q", file, k.Line, key)
				if near := nearest(key, keys, sections); near != "" {
					e.WithHint(fmt.Sprintf("did you mean %q? the keys are in README.md, 'Configuration'", near))
				} else {
					e.WithHint("the keys are in README.md, 'Configuration'")
				}
				return e
			}
		}
		return nil
	}
	return walk(doc.Content[0], "")
}

// under are the keys of section, sorted.
func under(keys map[string]bool, section string) []string {
	var out []string
	for k := range keys {
		if strings.HasPrefix(k, section+".") {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// nearest is the known name closest to name (keys and sections), ""
// when none is near: within a third of its length.
func nearest(name string, sets ...map[string]bool) string {
	best, bestD := "", len(name)/3+1
	for _, set := range sets {
		for k := range set {
			if d := workspace.EditDistance(name, k); d < bestD || d == bestD && k < best {
				best, bestD = k, d
			}
		}
	}
	return best
}

// envNames are the HUNK_* variables hunk reads: one per key, and the
// policy's and the config file's.
func envNames() map[string]bool {
	keys, _ := configKeys()
	names := map[string]bool{"HUNK_CONFIG": true, "HUNK_SERVE_TOKEN": true}
	for k := range keys {
		if !strings.HasPrefix(k, "policy.") {
			names["HUNK_"+strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(k))] = true
		}
	}
	for _, k := range policyKinds {
		names[k.env] = true
	}
	return names
}

// testVariables are the prefixes of variables hunk's own tests and
// benchmarks read (HUNK_REQUIRE_DRIVERS, …): not hunk's settings, never
// warned about.
var testVariables = []string{"HUNK_REQUIRE_", "HUNK_TEST_", "HUNK_E2E_", "HUNK_BENCH_", "HUNK_ROBUST_", "HUNK_REPLAY_",
	"HUNK_CORPUS_", "HUNK_HARNESS_", "HUNK_SKIP_LOG", "HUNK_UPDATE_SCRIPTS", "HUNK_RUN_ID", "HUNK_LONG_TESTS"}

// warnUnknownEnv warns about each HUNK_* variable of the environment hunk
// does not read, with the nearest one it does.
func (a *App) warnUnknownEnv() {
	var names map[string]bool
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, "HUNK_") {
			continue
		}
		if names == nil {
			names = envNames()
		}
		if names[k] || hasAnyPrefix(k, testVariables) {
			continue
		}
		if near := nearest(k, names); near != "" {
			a.Warn("unknown environment variable %s (did you mean %s?)", k, near)
		} else {
			a.Warn("unknown environment variable %s (hunk's are listed in README.md, 'Configuration')", k)
		}
	}
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
