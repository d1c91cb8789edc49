package interrupt

import "testing"

func TestSubcommand(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"exec", "--", "true"}, "exec"},
		{[]string{"-C", "exec", "read", "f"}, "read"}, // "exec" is -C's value
		{[]string{"--root", "/w", "--json", "exec", "--", "ls"}, "exec"},
		{[]string{"--root=/w", "exec"}, "exec"},
		{[]string{"--color", "never", "--config", "c.yaml", "write", "f"}, "write"},
		{[]string{"--json"}, ""},
		{[]string{"--", "exec"}, ""},
		{nil, ""},
	} {
		if got := Subcommand(c.args); got != c.want {
			t.Errorf("Subcommand(%q) = %q, want %q", c.args, got, c.want)
		}
	}
}
