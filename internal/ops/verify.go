package ops

import "github.com/hunk-dev/hunk/internal/execrun"

// Checked is a change's details that carry its checks' (package verify):
// the gate (verify) and the configured checks that inform.
type Checked interface {
	SetCheck(*execrun.Check)
	SetChecks([]*execrun.Check)
}

func (d *WriteDetails) SetCheck(c *execrun.Check)         { d.Verify = c }
func (d *EditDetails) SetCheck(c *execrun.Check)          { d.Verify = c }
func (d *ApplyPatchDetails) SetCheck(c *execrun.Check)    { d.Verify = c }
func (d *WriteDetails) SetChecks(c []*execrun.Check)      { d.Checks = c }
func (d *EditDetails) SetChecks(c []*execrun.Check)       { d.Checks = c }
func (d *ApplyPatchDetails) SetChecks(c []*execrun.Check) { d.Checks = c }
