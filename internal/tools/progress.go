package tools

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Progress receives a long call's progress, for a client that asked for it
// (MCP's progressToken): progress grows with every report (seconds run),
// total is where it ends (the timeout's seconds; 0 none), message a line
// for a person or a model.
type Progress func(progress, total float64, message string)

type progressKey struct{}

// WithProgress makes the calls run under ctx report their progress to p.
func WithProgress(ctx context.Context, p Progress) context.Context {
	return context.WithValue(ctx, progressKey{}, p)
}

// The pace of progress reports: the first once a run has lasted
// progressFirst, then every progressEvery — often enough to keep a client's
// request timeout (the TypeScript SDK's 60 s, reset by each report) from
// firing, rare enough to cost nothing.
var (
	progressFirst = 2 * time.Second
	progressEvery = 5 * time.Second
)

// reportProgress reports a running exec's progress to p: the seconds it
// has run, its timeout, and the last line of its output (tail, which the
// run writes its live output to). stop ends the reports.
func reportProgress(p Progress, timeout time.Duration, t *tailWriter) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		start := time.Now()
		timer := time.NewTimer(progressFirst)
		defer timer.Stop()
		for {
			select {
			case <-done:
				return
			case <-timer.C:
			}
			elapsed := time.Since(start)
			msg := fmt.Sprintf("running for %d s", int(elapsed.Seconds()))
			if timeout > 0 {
				msg += fmt.Sprintf(" (timeout %g s)", timeout.Seconds())
			}
			if l := t.lastLine(); l != "" {
				msg += "; last output: " + l
			}
			p(elapsed.Seconds(), timeout.Seconds(), msg)
			timer.Reset(progressEvery)
		}
	}()
	return func() { close(done); wg.Wait() }
}

// tailWriter keeps the last bytes written to it (a run's live output).
type tailWriter struct {
	mu  sync.Mutex
	buf []byte
}

const tailKeep = 1024

func (t *tailWriter) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(b) >= tailKeep {
		t.buf = append(t.buf[:0], b[len(b)-tailKeep:]...)
	} else {
		t.buf = append(t.buf, b...)
		if len(t.buf) > tailKeep {
			t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailKeep:]...)
		}
	}
	return len(b), nil
}

// lastLine is the last non-empty line written, at most 200 bytes of it.
func (t *tailWriter) lastLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := bytes.TrimRight(t.buf, "\r\n \t")
	if i := bytes.LastIndexAny(b, "\r\n"); i >= 0 {
		b = b[i+1:]
	}
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	if len(s) > 200 {
		s = "…" + s[len(s)-200:]
	}
	return s
}
