package ownstate

import (
	"reflect"
	"testing"
)

// TestMountedHolds: a mount under the directory that shows own, a
// directory above it or a part of it is found by its filesystem and the
// path within it, however the mount point is spelled in the table.
func TestMountedHolds(t *testing.T) {
	table := `22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
30 22 0:40 / /tmp rw shared:2 - tmpfs tmpfs rw
40 22 8:1 /home/u/.local/state /ws/above rw - ext4 /dev/sda1 rw
41 22 8:1 /home/u/.local/state/hunk /ws/my\040own rw - ext4 /dev/sda1 rw
42 22 8:1 /home/u/.local/state/hunk/history /ws/part rw - ext4 /dev/sda1 rw
43 22 8:1 /home/u/src /ws/src rw - ext4 /dev/sda1 rw
44 22 0:40 /x /ws/tmp rw - tmpfs tmpfs rw
45 22 8:1 / /ws/root rw - ext4 /dev/sda1 rw
46 22 8:1 /home/u/.local/state /elsewhere rw - ext4 /dev/sda1 rw
`
	ms := parseMountinfo(table)
	got := mountedHolds(ms, "/ws", "/home/u/.local/state/hunk")
	want := []string{"above/hunk", "my own", "part", "root/home/u/.local/state/hunk"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("mountedHolds = %q, want %q", got, want)
	}
	if got := mountedHolds(ms, "/ws", "/tmp/hunk"); !reflect.DeepEqual(got, []string(nil)) {
		t.Errorf("own on the tmpfs: %q, want none (/ws/tmp shows /x of it)", got)
	}
	if got := mountedHolds(ms, "/ws", "/tmp/x/y"); !reflect.DeepEqual(got, []string{"tmp/y"}) {
		t.Errorf("own under the tmpfs's /x: %q", got)
	}
}

// FuzzParseMountinfo: any table parses without a panic into clean
// absolute paths.
func FuzzParseMountinfo(f *testing.F) {
	f.Add(`40 22 8:1 /a\040b /ws/x\134y rw - ext4 /dev/sda1 rw` + "\n" + `1 2 3`)
	f.Fuzz(func(t *testing.T, s string) {
		for _, m := range parseMountinfo(s) {
			_ = mountedHolds([]mount{m}, "/ws", m.root)
			if m.root == "" || m.root[0] != '/' || m.point == "" || m.point[0] != '/' {
				t.Fatalf("not absolute: %+v", m)
			}
		}
	})
}
