package cmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/sandbox/docker"
)

// dockerAdminOptions are the docker driver's housekeeping actions of
// `hunk exec`: they run instead of a command.
type dockerAdminOptions struct {
	GC        bool   // remove hunk's leftover and warm containers
	MakeImage string // import a small offline image under this name
	Busybox   string // the static busybox --make-image uses
	Force     bool   // --make-image under a name that is not hunk-…
}

func (o dockerAdminOptions) dockerAdmin() bool { return o.GC || o.MakeImage != "" }

func addDockerAdminFlags(f *pflag.FlagSet, o *execOptions) {
	f.BoolVar(&o.GC, "gc", false, "remove hunk's containers from the Docker engine (warm ones, and leftovers of killed runs), then exit")
	f.StringVar(&o.MakeImage, "make-image", "", "import a small busybox image `NAME` into the Docker engine, offline, then exit")
	f.StringVar(&o.Busybox, "busybox", "", "the statically linked busybox `FILE` for --make-image (default: busybox on PATH)")
	f.BoolVar(&o.Force, "force", false, "with --make-image: a name that is not hunk-… (it stands in for any image of that name)")
}

// runDockerAdmin does --make-image, then --gc.
func runDockerAdmin(ctx context.Context, app *App, o *execOptions) error {
	d := &docker.Docker{}
	var human []string
	details := map[string]any{}
	if o.MakeImage != "" {
		id, err := d.MakeImage(ctx, o.MakeImage, o.Busybox, o.Force)
		if err != nil {
			return err
		}
		human = append(human, fmt.Sprintf("Imported image %s (%s)", o.MakeImage, id))
		details["image"], details["imageId"] = o.MakeImage, id
	}
	if o.GC {
		removed, err := d.GC(ctx)
		if err != nil {
			return err
		}
		if removed == nil {
			removed = []string{}
		}
		if len(removed) == 0 {
			human = append(human, "No hunk containers to remove.")
		} else {
			human = append(human, fmt.Sprintf("Removed %s: %s", result.Count(len(removed), "container"), strings.Join(removed, " ")))
		}
		details["removed"] = removed
	}
	text := strings.Join(human, "\n")
	return app.Emit(text, text, details)
}
