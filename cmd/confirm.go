package cmd

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/hunk-dev/hunk/internal/execrun"
	"github.com/hunk-dev/hunk/internal/interrupt"
	"github.com/hunk-dev/hunk/internal/result"
)

// ttyWait is how long the terminal's prompt waits for an answer: then no.
const ttyWait = 60 * time.Second

// ttyConfirm is the person's yes at the terminal: a prompt on /dev/tty
// (never stdin, which may carry a patch or the command's input) showing
// the plan; y or yes runs it, anything else, end of input and no answer
// within ttyWait do not; an interrupt (Ctrl-C) ends hunk with nothing run.
// nil when hunk's stderr is not a terminal or it has none (a script, CI, an
// agent's shell capturing its output: no person is watching): an ask is
// then CONFIRMATION_REQUIRED.
func ttyConfirm(stderr io.Writer) func(execrun.Plan) (bool, error) {
	ask := ttyAsk(stderr)
	if ask == nil {
		return nil
	}
	return func(p execrun.Plan) (bool, error) {
		return ask("hunk: a command rule asks for your yes before this runs:\n" + p.Text() + "Run it?")
	}
}

// ttyAsk is ttyConfirm's prompt for any question (the plan and its
// question, shown before " [y/N]").
func ttyAsk(stderr io.Writer) func(question string) (bool, error) {
	if f, ok := stderr.(*os.File); !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil
	}
	f.Close()
	return func(question string) (bool, error) {
		tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
		if err != nil {
			return false, err
		}
		defer tty.Close()
		fmt.Fprintf(tty, "%s [y/N] (no after %d s) ", question, int(ttyWait.Seconds()))
		_ = tty.SetReadDeadline(time.Now().Add(ttyWait))
		answer := make(chan string, 1)
		go func() {
			line, err := bufio.NewReader(tty).ReadString('\n')
			if err != nil {
				line = ""
			}
			answer <- line
		}()
		ctx, _ := interrupt.Context()
		select {
		case line := <-answer:
			a := strings.ToLower(strings.TrimSpace(line))
			if a == "" {
				fmt.Fprintln(tty)
			}
			return a == "y" || a == "yes", nil
		case <-time.After(ttyWait): // a terminal that takes no read deadline
			fmt.Fprintln(tty)
			return false, nil
		case <-ctx.Done():
			fmt.Fprintln(tty)
			return false, result.Errorf(result.Interrupted, "interrupted while asking; nothing was run or written")
		}
	}
}
