package sandbox

import (
	"bytes"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"testing"
	"time"
)

// want is what a Capture of max bytes must keep of data.
func want(data []byte, max int64) []byte {
	if max <= 0 || int64(len(data)) <= max {
		return data
	}
	h := max / 2
	t := max - h
	out := append([]byte(nil), data[:h]...)
	out = append(out, Marker(int64(len(data))-max)...)
	return append(out, data[int64(len(data))-t:]...)
}

func TestCapture(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, tc := range []struct {
		name      string
		size, max int
	}{
		{"empty", 0, 10},
		{"under", 5, 10},
		{"exact", 10, 10},
		{"one over", 11, 10},
		{"far over", 1000, 10},
		{"odd max", 1000, 7},
		{"max 1", 50, 1},
		{"unlimited", 300, 0},
		{"big", 1 << 20, 4096},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := make([]byte, tc.size)
			for i := range data {
				data[i] = byte('a' + i%26)
			}
			for trial := 0; trial < 20; trial++ {
				var live bytes.Buffer
				c := NewCapture(int64(tc.max), &live)
				rest := data
				for len(rest) > 0 {
					n := 1 + rng.Intn(2*tc.max+3)
					if n > len(rest) {
						n = len(rest)
					}
					if k, err := c.Write(rest[:n]); k != n || err != nil {
						t.Fatalf("Write = %d, %v", k, err)
					}
					rest = rest[n:]
				}
				c.Close()
				w := want(data, int64(tc.max))
				if got := c.Bytes(); !bytes.Equal(got, w) {
					t.Fatalf("Bytes = %q, want %q", trunc(got), trunc(w))
				}
				if !bytes.Equal(live.Bytes(), w) {
					t.Fatalf("live = %q, want %q", trunc(live.Bytes()), trunc(w))
				}
				if got, w := c.Truncated(), tc.max > 0 && tc.size > tc.max; got != w {
					t.Fatalf("Truncated = %v, want %v", got, w)
				}
				if c.Total() != int64(tc.size) {
					t.Fatalf("Total = %d", c.Total())
				}
			}
		})
	}
}

func trunc(b []byte) string {
	if len(b) > 200 {
		return fmt.Sprintf("%s…(%d bytes)", b[:200], len(b))
	}
	return string(b)
}

func BenchmarkCapture(b *testing.B) {
	buf := make([]byte, 64<<10)
	c := NewCapture(1<<20, nil)
	b.SetBytes(int64(len(buf)))
	for i := 0; i < b.N; i++ {
		c.Write(buf)
	}
}

// FuzzCapture checks that whatever the chunking, the kept bytes are the head
// and tail of the stream with the marker between, live and captured alike.
func FuzzCapture(f *testing.F) {
	f.Add([]byte("hello, world"), uint16(5), uint8(3))
	f.Add(bytes.Repeat([]byte("ab"), 100), uint16(7), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, max uint16, chunk uint8) {
		var live bytes.Buffer
		c := NewCapture(int64(max), &live)
		step := int(chunk) + 1
		for i := 0; i < len(data); i += step {
			c.Write(data[i:min(i+step, len(data))])
		}
		c.Close()
		w := want(data, int64(max))
		if !bytes.Equal(c.Bytes(), w) || !bytes.Equal(live.Bytes(), w) {
			t.Fatalf("max %d chunk %d: got %q live %q want %q", max, step, c.Bytes(), live.Bytes(), w)
		}
	})
}

// blockingWriter holds every Write until release is closed.
type blockingWriter struct {
	release chan struct{}
	mu      sync.Mutex
	got     []byte
}

func (b *blockingWriter) Write(p []byte) (int, error) {
	<-b.release
	b.mu.Lock()
	defer b.mu.Unlock()
	b.got = append(b.got, p...)
	return len(p), nil
}

// A live destination that blocks never blocks the writer of the stream: the
// backlog is reported instead, cleared (with a wake-up) once the destination
// takes it, and Flush delivers everything in order.
func TestLiveWriterNeverBlocks(t *testing.T) {
	dst := &blockingWriter{release: make(chan struct{})}
	drained := make(chan struct{}, 4)
	lw := newLiveWriter(dst, func() { drained <- struct{}{} })
	var want []byte
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	for i := 0; i < 6; i++ { // 384 KiB: over the backlog limit
		chunk[0] = byte('a' + i)
		want = append(want, chunk...)
		done := make(chan struct{})
		go func() { lw.Write(chunk); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("Write blocked on a blocked destination")
		}
	}
	if !lw.backlogged() {
		t.Fatal("384 KiB waiting, but not backlogged")
	}
	close(dst.release)
	select {
	case <-drained:
	case <-time.After(5 * time.Second):
		t.Fatal("no wake-up once the destination took the backlog")
	}
	lw.Flush()
	if lw.backlogged() {
		t.Fatal("still backlogged after Flush")
	}
	if !bytes.Equal(dst.got, want) {
		t.Fatalf("destination got %d bytes, want %d in order", len(dst.got), len(want))
	}
}

// TestCaptureTailAtLineStart: a cut stream's kept tail begins at a line's
// start, the partial line before it counted among the omitted bytes; one
// long line is kept as it is.
func TestCaptureTailAtLineStart(t *testing.T) {
	c := NewCapture(20, nil)
	var all strings.Builder
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&all, "line%02d\n", i)
	}
	c.Write([]byte(all.String()))
	want := "line01\nlin" + Marker(int64(all.Len()-10-7)) + "line09\n"
	if got := string(c.Bytes()); got != want {
		t.Errorf("kept %q, want %q", got, want)
	}
	long := NewCapture(20, nil)
	long.Write([]byte(strings.Repeat("x", 100)))
	if got := string(long.Bytes()); got != strings.Repeat("x", 10)+Marker(80)+strings.Repeat("x", 10) {
		t.Errorf("one long line: kept %q", got)
	}
}
