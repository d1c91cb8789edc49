package cmd

import (
	"testing"
	"time"
)

func TestExecDockerFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want func(o *execOptions) bool
	}{
		{"--gc needs no command", []string{"--gc"}, nil, func(o *execOptions) bool { return o.GC && o.dockerAdmin() }},
		{"--make-image needs no command", []string{"--make-image", "img:v1", "--busybox", "/bb"}, nil, func(o *execOptions) bool {
			return o.MakeImage == "img:v1" && o.Busybox == "/bb" && o.dockerAdmin()
		}},
		{"docker run flags", []string{"--driver", "docker", "--image", "img", "--pull", "--keep-warm", "--idle", "30s", "--", "true"}, nil, func(o *execOptions) bool {
			return o.Driver == "docker" && o.Image == "img" && o.Pull && o.KeepWarm && o.Idle == 30*time.Second && !o.dockerAdmin()
		}},
		{"docker settings from the environment", []string{"--", "true"}, map[string]string{"HUNK_EXEC_DRIVER": "docker", "HUNK_EXEC_IMAGE": "envimg", "HUNK_EXEC_KEEP_WARM": "true", "HUNK_EXEC_IDLE": "2m"}, func(o *execOptions) bool {
			return o.Driver == "docker" && o.Image == "envimg" && o.KeepWarm && o.Idle == 2*time.Minute
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			o, err := parseExec(t, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.want(o) {
				t.Fatalf("parsed %+v", *o)
			}
		})
	}
}
