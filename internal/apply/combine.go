package apply

import (
	"errors"
	"fmt"

	"github.com/hunk-dev/hunk/internal/result"
)

// Combine makes one error of several failures (chunks of a file, files of
// a patch): the first one's message, code, place and hints, the others in
// its Also (each with its own), and every one in details.failures, so that
// a model can fix them all in one round trip. Combined errors are
// flattened.
func Combine(errs []error) error {
	var leaves failureList
	for _, err := range errs {
		var fl failureList
		if errors.As(err, &fl) {
			leaves = append(leaves, fl...)
		} else {
			leaves = append(leaves, err)
		}
	}
	if len(leaves) == 1 {
		return leaves[0]
	}
	first := result.As(leaves[0])
	c := *first
	c.Err = leaves
	c.Details = map[string]any{}
	for k, v := range first.Details {
		c.Details[k] = v
	}
	failures := make([]map[string]any, 0, len(leaves))
	for i, err := range leaves {
		re := result.As(err)
		f := re.AllDetails()
		f["code"], f["message"] = re.Code, re.Msg
		failures = append(failures, f)
		if i > 0 {
			c.Also = append(c.Also, re)
		}
	}
	c.Details["failures"] = failures
	return &c
}

// failureList holds the failures a combined error stands for.
type failureList []error

func (fl failureList) Error() string { return fmt.Sprintf("%d failures", len(fl)) }
