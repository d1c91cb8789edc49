package ops

import (
	"context"

	"github.com/hunk-dev/hunk/internal/sandbox"
)

// Drivers surveys every driver: whether it works here, what it enforces and
// what it guards against a hostile command, and which one auto picks.
func Drivers(ctx context.Context) *Output {
	rows, auto := sandbox.Survey(ctx)
	text := sandbox.SurveyText(rows, auto)
	return &Output{Text: text, Message: text, Details: &DriversDetails{Drivers: rows, Auto: auto}}
}
