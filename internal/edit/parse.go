package edit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/hunk-dev/hunk/internal/result"
)

// The JSON keys accepted for each field of an edit: the names agent tools
// use (pi's oldText, Claude Code's old_string, Anthropic's str_replace
// old_str, OpenCode's oldString, and old_text).
var (
	oldKeys     = []string{"oldText", "old_string", "old_str", "oldString", "old_text"}
	newKeys     = []string{"newText", "new_string", "new_str", "newString", "new_text"}
	replaceKeys = []string{"replaceAll", "replace_all"}
)

// ParseEdits reads a JSON list of edits, [{"oldText": …, "newText": …,
// "replaceAll": …}, …] (each field also under its aliases), from r. An
// object {"edits": [...]} and a single edit object are accepted too.
// Unknown keys are refused, so that a misspelt field is not silently dropped.
func ParseEdits(r io.Reader) ([]Edit, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, result.Wrap(result.IOError, err, "reading edits")
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, badEdits("no JSON given")
	}
	var raws []map[string]json.RawMessage
	switch data[0] {
	case '[':
		if err := json.Unmarshal(data, &raws); err != nil {
			return nil, badEdits("%v", err)
		}
	case '{':
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(data, &obj); err != nil {
			return nil, badEdits("%v", err)
		}
		if list, ok := obj["edits"]; ok {
			if err := json.Unmarshal(list, &raws); err != nil {
				return nil, badEdits(`"edits": %v`, err)
			}
			for k := range obj {
				if k != "edits" && k != "path" && k != "file_path" {
					return nil, badEdits("unknown key %q next to \"edits\"", k)
				}
			}
		} else {
			raws = []map[string]json.RawMessage{obj}
		}
	default:
		return nil, badEdits("expected a JSON list of edits")
	}
	if len(raws) == 0 {
		return nil, badEdits("the list of edits is empty")
	}
	edits := make([]Edit, len(raws))
	for i, m := range raws {
		e, err := decodeEdit(m)
		if err != nil {
			return nil, badEdits("edit %d: %v", i+1, err)
		}
		edits[i] = e
	}
	return edits, nil
}

func badEdits(format string, args ...any) *result.Error {
	return result.Errorf(result.InvalidArgument, "invalid --edits: "+format, args...).
		WithHint(`give a JSON list such as [{"oldText": "a", "newText": "b"}, {"oldText": "c", "newText": "d", "replaceAll": true}]`)
}

func decodeEdit(m map[string]json.RawMessage) (Edit, error) {
	known := map[string]bool{}
	for _, ks := range [][]string{oldKeys, newKeys, replaceKeys} {
		for _, k := range ks {
			known[k] = true
		}
	}
	var unknown []string
	for k := range m {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return Edit{}, fmt.Errorf("unknown key %s (expected oldText, newText, replaceAll or their aliases)", quoteList(unknown))
	}
	var e Edit
	oldSet, err := field(m, oldKeys, &e.OldText)
	if err != nil {
		return e, err
	}
	if !oldSet {
		return e, fmt.Errorf("missing oldText")
	}
	newSet, err := field(m, newKeys, &e.NewText)
	if err != nil {
		return e, err
	}
	if !newSet {
		return e, fmt.Errorf("missing newText (use \"\" to delete the old text)")
	}
	if _, err := field(m, replaceKeys, &e.ReplaceAll); err != nil {
		return e, err
	}
	return e, nil
}

// field decodes the one key of keys present in m into v; two of them is an error.
func field[T any](m map[string]json.RawMessage, keys []string, v *T) (bool, error) {
	var found []string
	for _, k := range keys {
		if _, ok := m[k]; ok {
			found = append(found, k)
		}
	}
	switch len(found) {
	case 0:
		return false, nil
	case 1:
		if err := json.Unmarshal(m[found[0]], v); err != nil {
			return true, fmt.Errorf("%q: %v", found[0], strings.TrimPrefix(err.Error(), "json: "))
		}
		return true, nil
	}
	return true, fmt.Errorf("both %q and %q given; use one", found[0], found[1])
}

func quoteList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}
