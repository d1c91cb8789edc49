package sandbox

import (
	"bytes"
	"fmt"
	"io"
	"sync"
)

// Capture is one captured output stream (stdout or stderr) of a sandboxed
// command, shared by every driver. It keeps the first half of the allowed
// bytes (the head) and the last half (the tail, a ring buffer) and counts the
// rest, so memory stays bounded whatever the command prints. Write never
// fails and never blocks on the capture itself: drivers copy the command's
// pipe into it as fast as the pipe delivers, so a command is never stalled on
// a full pipe (a slow live writer is the only thing that can slow it down).
//
// Live, when set, receives the same bytes the captured result will hold, as
// they arrive: the head immediately, and at Close the rest — the omitted-bytes
// marker and the tail when the stream was cut. A human watching therefore
// sees exactly what a program reading the JSON result gets.
type Capture struct {
	mu       sync.Mutex
	max      int64 // 0 = unlimited
	headMax  int64
	head     []byte
	tail     []byte // ring of len tailMax once full
	tailPos  int    // next write position in tail when full
	tailFull bool
	total    int64
	live     io.Writer
	liveErr  bool
	closed   bool
}

// NewCapture returns a Capture keeping at most max bytes (0: everything),
// copying what it keeps to live (nil: no live copy).
func NewCapture(max int64, live io.Writer) *Capture {
	c := &Capture{max: max, live: live}
	if max > 0 {
		c.headMax = max / 2
	}
	return c
}

func (c *Capture) tailMax() int64 { return c.max - c.headMax }

// Write records p. It always reports len(p), nil.
func (c *Capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(p)
	c.total += int64(n)
	if c.max <= 0 {
		c.head = append(c.head, p...)
		c.writeLive(p)
		return n, nil
	}
	if room := c.headMax - int64(len(c.head)); room > 0 {
		k := int64(len(p))
		if k > room {
			k = room
		}
		c.head = append(c.head, p[:k]...)
		c.writeLive(p[:k])
		p = p[k:]
	}
	if len(p) > 0 {
		c.addTail(p)
	}
	return n, nil
}

// addTail appends p to the tail ring.
func (c *Capture) addTail(p []byte) {
	tm := int(c.tailMax())
	if tm <= 0 {
		return
	}
	if len(p) >= tm {
		// Only the last tm bytes of p can survive.
		if cap(c.tail) < tm {
			c.tail = make([]byte, tm)
		}
		c.tail = c.tail[:tm]
		copy(c.tail, p[len(p)-tm:])
		c.tailPos, c.tailFull = 0, true
		return
	}
	if !c.tailFull {
		if len(c.tail)+len(p) <= tm {
			c.tail = append(c.tail, p...)
			if len(c.tail) == tm {
				c.tailFull, c.tailPos = true, 0
			}
			return
		}
		// Fill up to tm, then wrap.
		k := tm - len(c.tail)
		c.tail = append(c.tail, p[:k]...)
		p = p[k:]
		c.tailFull, c.tailPos = true, 0
	}
	for len(p) > 0 {
		k := copy(c.tail[c.tailPos:], p)
		p = p[k:]
		c.tailPos = (c.tailPos + k) % tm
	}
}

// tailBytes returns the tail in order.
func (c *Capture) tailBytes() []byte {
	if !c.tailFull {
		return append([]byte(nil), c.tail...)
	}
	out := make([]byte, 0, len(c.tail))
	out = append(out, c.tail[c.tailPos:]...)
	return append(out, c.tail[:c.tailPos]...)
}

func (c *Capture) writeLive(p []byte) {
	if c.live == nil || c.liveErr || len(p) == 0 {
		return
	}
	if _, err := c.live.Write(p); err != nil {
		c.liveErr = true // a closed terminal must not stop the command
	}
}

// Close flushes the rest of the kept output (marker and tail) to the live
// writer. Call it once the stream has ended; Bytes is valid before and after.
func (c *Capture) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.closed = true
	if c.max > 0 {
		c.writeLive(c.rest())
	}
	if lw, ok := c.live.(*liveWriter); ok {
		lw.Flush()
	}
}

// liveAsync makes the live copy asynchronous (see liveWriter), with onDrain
// called when a backlog has cleared. It returns the liveWriter, nil when the
// capture has no live copy.
func (c *Capture) liveAsync(onDrain func()) *liveWriter {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.live == nil {
		return nil
	}
	lw := newLiveWriter(c.live, onDrain)
	c.live = lw
	return lw
}

// rest is everything after the head: the marker (when cut) and the tail,
// which then begins at a line's start: the partial line the cut left at
// its front (up to lineSlack bytes of it) is counted among the omitted.
func (c *Capture) rest() []byte {
	t := c.tailBytes()
	omitted := c.total - int64(len(c.head)) - int64(len(t))
	if omitted <= 0 {
		return t
	}
	if i := bytes.IndexByte(t[:min(len(t), lineSlack)], '\n'); i >= 0 && i+1 < len(t) {
		t, omitted = t[i+1:], omitted+int64(i+1)
	}
	m := Marker(omitted)
	out := make([]byte, 0, len(m)+len(t))
	out = append(out, m...)
	return append(out, t...)
}

// Bytes returns the kept output: all of it, or head, marker and tail.
func (c *Capture) Bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.max <= 0 {
		return append([]byte(nil), c.head...)
	}
	out := append([]byte(nil), c.head...)
	return append(out, c.rest()...)
}

// Truncated reports whether bytes were dropped from the middle.
func (c *Capture) Truncated() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.max > 0 && c.total > c.max
}

// Total is the number of bytes the command wrote to the stream.
func (c *Capture) Total() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// lineSlack is how far into the kept tail its first line start is looked
// for: a longer first line (one long line of output) is kept as it is.
const lineSlack = 4096

// Marker is the line put between head and tail when n bytes were dropped.
// It starts and ends with a newline so it stands on its own line.
func Marker(n int64) string {
	return fmt.Sprintf("\n[... %d bytes omitted by hunk (the output kept: exec.max-output) ...]\n", n)
}

// liveBacklog is how much live output may wait for a slow destination before
// the supervisor stops reading the command's pipe (which then fills, and the
// command waits, as it would writing to a slow terminal itself).
const liveBacklog = 256 << 10

// liveWriter copies a stream's live output to its destination (hunk's own
// stdout or stderr) from a goroutine of its own, started at the first byte.
// A destination that blocks — a pipe nobody reads, a terminal stopped with
// Ctrl-S — then never stalls the supervisor: the run's timeout and
// interrupts still act, and backpressure goes to the command through its
// pipe (see backlogged). Write never blocks; Flush waits until everything
// written has reached the destination (or the destination failed).
type liveWriter struct {
	mu      sync.Mutex
	wakeup  sync.Cond
	w       io.Writer
	onDrain func() // called when a backlog has shrunk below half the limit
	pending []byte
	writing int
	over    bool
	started bool
	closed  bool
	failed  bool
	done    chan struct{}
}

func newLiveWriter(w io.Writer, onDrain func()) *liveWriter {
	lw := &liveWriter{w: w, onDrain: onDrain, done: make(chan struct{})}
	lw.wakeup.L = &lw.mu
	return lw
}

func (lw *liveWriter) Write(p []byte) (int, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.failed || lw.closed {
		return len(p), nil
	}
	lw.pending = append(lw.pending, p...)
	if !lw.started {
		lw.started = true
		go lw.run()
	}
	lw.wakeup.Signal()
	return len(p), nil
}

func (lw *liveWriter) run() {
	defer close(lw.done)
	lw.mu.Lock()
	for {
		for len(lw.pending) == 0 && !lw.closed {
			lw.wakeup.Wait()
		}
		if len(lw.pending) == 0 {
			lw.mu.Unlock()
			return
		}
		buf := lw.pending
		lw.pending, lw.writing = nil, len(buf)
		lw.mu.Unlock()
		_, err := lw.w.Write(buf)
		lw.mu.Lock()
		lw.writing = 0
		if err != nil {
			lw.failed, lw.pending = true, nil // a closed terminal must not stop the command
		}
		if lw.over && len(lw.pending) < liveBacklog/2 {
			lw.over = false
			if lw.onDrain != nil {
				lw.mu.Unlock()
				lw.onDrain()
				lw.mu.Lock()
			}
		}
	}
}

// backlogged reports whether more than liveBacklog bytes wait for the
// destination; the supervisor then leaves the stream's pipe unread until
// onDrain.
func (lw *liveWriter) backlogged() bool {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if len(lw.pending)+lw.writing > liveBacklog {
		lw.over = true
	}
	return lw.over
}

// Flush waits until everything written has been written out; no Write may
// follow it.
func (lw *liveWriter) Flush() {
	lw.mu.Lock()
	lw.closed = true
	started := lw.started
	lw.wakeup.Signal()
	lw.mu.Unlock()
	if started {
		<-lw.done
	}
}
