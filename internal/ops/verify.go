package ops

import "github.com/hunk-dev/hunk/internal/execrun"

// Checked is a change's details that carry its check's (package verify).
type Checked interface{ SetCheck(*execrun.Check) }

func (d *WriteDetails) SetCheck(c *execrun.Check)      { d.Verify = c }
func (d *EditDetails) SetCheck(c *execrun.Check)       { d.Verify = c }
func (d *ApplyPatchDetails) SetCheck(c *execrun.Check) { d.Verify = c }
