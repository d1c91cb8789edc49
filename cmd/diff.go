package cmd

// colorDiff colors d when stdout is a colored terminal.
func (a *App) colorDiff(d string) string {
	if d == "" || !a.ColorOut {
		return d
	}
	return colorizeDiff(d)
}
