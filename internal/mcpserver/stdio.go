package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
)

// The stdio transport: newline-delimited JSON-RPC messages on stdin and
// stdout, one connection for the life of the process.

// stdio is the one connection of `hunk mcp`: stdin and stdout.
type stdio struct {
	*conn
	wmu   sync.Mutex // one message at a time on out
	out   io.Writer
	calls sync.WaitGroup // requests being answered
}

// Serve runs the server over in and out until in ends — every request read
// answered first, so `printf '…requests…' | hunk mcp` loses none — or ctx
// is done.
func Serve(ctx context.Context, opts Options, in io.Reader, out io.Writer) error {
	s := &stdio{out: out}
	s.conn = newServer(opts).newConn(opts.Session, s.send)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	read := make(chan error, 1)
	go func() { read <- s.read(ctx, bufio.NewReaderSize(in, 64<<10)) }()
	select {
	case err := <-read:
		s.calls.Wait() // every request read is answered before the end
		return err
	case <-ctx.Done():
	}
	// A signal: stop reading, cancel every call (exec stops its command),
	// and end within a second whatever still runs — a call blocked in the
	// kernel must not keep hunk mcp from ending.
	if c, ok := in.(io.Closer); ok {
		c.Close()
	}
	done := make(chan struct{})
	go func() { <-read; s.calls.Wait(); close(done) }() // no call starts once reading ended
	select {
	case <-done:
	case <-time.After(shutdownGrace):
		s.logf("ending with calls still running")
	}
	return nil
}

// shutdownGrace is how long hunk mcp waits, once signalled, for its calls
// to stop.
const shutdownGrace = 900 * time.Millisecond

// MaxMessage bounds one message hunk mcp reads (one line): a longer one is
// refused with an error reply and skipped, never held.
const MaxMessage = 64 << 20

// read reads and handles messages, a line each, until the input ends.
func (s *stdio) read(ctx context.Context, r *bufio.Reader) error {
	for {
		line, long, err := readLine(r, MaxMessage)
		if long && ctx.Err() == nil {
			s.write(errorReply(nil, -32600, fmt.Sprintf("Invalid Request: a message over %d bytes (hunk mcp reads at most %d MiB a line); skipped", MaxMessage, MaxMessage>>20)))
		}
		if len(line) > 0 && ctx.Err() == nil {
			s.line(ctx, line)
		}
		if err != nil || ctx.Err() != nil {
			if err == io.EOF || ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}

// readLine reads one line of at most max bytes; a longer one is read to
// its end and dropped (long: nothing of it is returned). The line is kept
// in the reader's buffer-sized pieces until it ends, then joined once: a
// line of n bytes costs 2n at most, never a doubling buffer's garbage.
func readLine(r *bufio.Reader, max int) (line []byte, long bool, err error) {
	var parts [][]byte
	n := 0
	for {
		frag, err := r.ReadSlice('\n')
		if n += len(frag); n > max {
			for err == bufio.ErrBufferFull {
				_, err = r.ReadSlice('\n')
			}
			return nil, true, err
		}
		if err != bufio.ErrBufferFull {
			if len(parts) == 0 {
				return append([]byte(nil), frag...), false, err
			}
			line = make([]byte, 0, n)
			for _, p := range parts {
				line = append(line, p...)
			}
			return append(line, frag...), false, err
		}
		parts = append(parts, append([]byte(nil), frag...))
	}
}

// send writes one message.
func (s *stdio) send(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	s.write(append(b, '\n'))
}

func (s *stdio) write(b []byte) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.out.Write(b)
}

// line handles one line read.
func (s *stdio) line(ctx context.Context, line []byte) {
	if reply := reject(line); reply != nil {
		s.write(reply)
		return
	}
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	if line[0] == '[' {
		// A batch (protocol 2025-03-26): answered with one array, after
		// every message in it.
		var batch []*message
		if json.Unmarshal(line, &batch) != nil {
			s.write(errorReply(nil, -32600, "Invalid Request: a malformed batch"))
			return
		}
		for _, m := range batch {
			if m == nil {
				continue
			}
			if e, _ := requestEra(m.Params); e == eraStateless {
				// As hunk serve refuses it: the era has no batches.
				s.write(errorReply(nil, -32600, fmt.Sprintf("Invalid Request: protocol %s has no batches: send one message a line", statelessVersion)))
				return
			}
		}
		s.calls.Add(1)
		go func() {
			defer s.calls.Done()
			var replies []*message
			for _, m := range batch {
				if r := s.handle(ctx, m, s.send); r != nil {
					replies = append(replies, r)
				}
			}
			if len(replies) > 0 {
				s.send(replies)
			}
		}()
		return
	}
	var m message
	if json.Unmarshal(line, &m) != nil {
		s.write(errorReply(nil, -32600, "Invalid Request: a message is a JSON object"))
		return
	}
	if m.Method == "tools/call" && len(m.ID) > 0 && s.concurrent(&m) {
		// A call that may run long (exec) or waits for the client's roots
		// runs beside the reading, so a cancellation or the roots reach
		// it; the others are answered at once, without a hand-off.
		s.calls.Add(1)
		go func() {
			defer s.calls.Done()
			if r := s.handle(ctx, &m, s.send); r != nil {
				s.send(r)
			}
		}()
		return
	}
	if r := s.handle(ctx, &m, s.send); r != nil {
		s.send(r)
	}
}

// concurrent reports whether a tools/call runs concurrently with the
// reading: exec (it may run for minutes), a call that may ask the person
// through a client that declared elicitation (the answer comes on the
// line), and any call while the client's roots are being asked for (it
// waits for them, and their answer comes on the line too).
func (c *conn) concurrent(m *message) bool {
	c.mu.Lock()
	ready, elicit := c.ready, c.elicit
	c.mu.Unlock()
	if p, err := m.callParams(); err == nil {
		if t := c.toolByName[p.Name]; p.Name == "exec" || elicit && t != nil && t.MayAsk() {
			return true // a person's yes asked for comes on the line too
		}
	}
	if ready == nil {
		return false
	}
	select {
	case <-ready:
		return false
	default:
		return true
	}
}
