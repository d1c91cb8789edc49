package fsquery

import (
	"fmt"
	"time"

	"github.com/hunk-dev/hunk/internal/workspace"
)

// Info describes a file or directory.
type Info struct {
	Path        string `json:"path" jsonschema:"the path, relative to the workspace"`
	Size        int64  `json:"size" jsonschema:"size in bytes"`
	Created     string `json:"created" jsonschema:"creation time, as JavaScript's Date writes it (the change time: the birth time is not read)"`
	Modified    string `json:"modified" jsonschema:"modification time, as JavaScript's Date writes it"`
	Accessed    string `json:"accessed" jsonschema:"access time, as JavaScript's Date writes it"`
	IsDirectory bool   `json:"isDirectory" jsonschema:"it is a directory"`
	IsFile      bool   `json:"isFile" jsonschema:"it is a regular file"`
	Permissions string `json:"permissions" jsonschema:"permission bits in octal"`
	Content     string `json:"content" jsonschema:"the facts as text, one per line"`
}

// Stats describes a file or directory: size, times, type and
// permissions (Content: the facts as the reference words them).
func Stats(ws *workspace.Workspace, p string) (*Info, error) {
	name, fi, err := Stat(ws, p)
	if err != nil {
		return nil, err
	}
	created, accessed := fileTimes(fi)
	info := &Info{
		Path:        name,
		Size:        fi.Size(),
		Created:     jsDate(created),
		Modified:    jsDate(fi.ModTime()),
		Accessed:    jsDate(accessed),
		IsDirectory: fi.IsDir(),
		IsFile:      fi.Mode().IsRegular(),
		Permissions: fmt.Sprintf("%03o", fi.Mode().Perm()),
	}
	text := fmt.Sprintf("size: %d\ncreated: %s\nmodified: %s\naccessed: %s\nisDirectory: %t\nisFile: %t\npermissions: %s",
		info.Size, info.Created, info.Modified, info.Accessed, info.IsDirectory, info.IsFile, info.Permissions)
	info.Content = text
	return info, nil
}

// jsDate writes t as JavaScript's Date.prototype.toString does, in local
// time — the reference server's get_file_info shows its times so.
func jsDate(t time.Time) string {
	t = t.Local()
	zone, _ := t.Zone()
	if zone == "UTC" {
		zone = "Coordinated Universal Time"
	}
	return t.Format("Mon Jan 02 2006 15:04:05 GMT-0700") + " (" + zone + ")"
}
