package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/hunk-dev/hunk/internal/sandbox"
)

// The docker driver's scripts (exec_docker_*.txtar) start with [!docker]
// skip. The condition is true when a Docker engine answers and the test
// image ($HUNK_TEST_IMAGE, default hunk-test:latest, imported offline with
// --make-image when missing) is there; when HUNK_REQUIRE_DRIVERS names
// docker, an unavailable engine fails the script instead of skipping it.
func init() {
	if os.Getenv("HUNK_TEST_IMAGE") == "" {
		os.Setenv("HUNK_TEST_IMAGE", "hunk-test:latest")
	}
	extraConditions["docker"] = dockerCondition
}

var (
	dockerOnce sync.Once
	dockerOK   bool
	dockerErr  error
)

func dockerCondition(string) (bool, error) {
	dockerOnce.Do(func() {
		d := &sandbox.Docker{}
		c := d.Probe(context.Background())
		if !c.Available {
			if requiredDriver("docker") {
				dockerErr = fmt.Errorf("docker driver required (HUNK_REQUIRE_DRIVERS) but unavailable: %s", c.Reason)
			} else {
				fmt.Fprintf(os.Stderr, "SKIPPED exec_docker scripts: no Docker engine: %s\n", c.Reason)
			}
			return
		}
		img := os.Getenv("HUNK_TEST_IMAGE")
		if ok, _ := d.HasImage(context.Background(), img); ok {
			dockerOK = true
			return
		}
		if _, err := d.MakeImage(context.Background(), img, ""); err != nil {
			dockerErr = fmt.Errorf("making the test image %s: %v", os.Getenv("HUNK_TEST_IMAGE"), err)
			return
		}
		dockerOK = true
	})
	return dockerOK, dockerErr
}

func requiredDriver(name string) bool {
	for _, n := range strings.Split(os.Getenv("HUNK_REQUIRE_DRIVERS"), ",") {
		if strings.TrimSpace(n) == name {
			return true
		}
	}
	return false
}
