package serve

// The access log: one JSON object a request — who, what, how it ended —
// never a file's content, a call's arguments or a secret (a session is
// named by a hash of its id).

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/hunk-dev/hunk/internal/history"
)

// record is what the access log says of one request, filled on its way.
type record struct {
	start        time.Time
	auth         string
	method, tool string
	// decisions are the person's rules' decisions the request's calls met
	// (the audit trail's: the tool, the decision, the rule; never an
	// argument).
	mu        sync.Mutex
	decisions []history.Decision
}

// decided is the record's WithDecided function.
func (rec *record) decided(d history.Decision) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.decisions) < 16 {
		rec.decisions = append(rec.decisions, d)
	}
}

type recordKey struct{}

// note tells r's record its JSON-RPC method (or "call") and tool.
func note(ctx context.Context, method, tool string) {
	if rec, ok := ctx.Value(recordKey{}).(*record); ok {
		rec.method, rec.tool = method, tool
	}
}

// recorder is a ResponseWriter that keeps the status and the bytes
// written, and flushes (event streams).
type recorder struct {
	http.ResponseWriter
	status  int
	bytes   int64
	written bool
}

func (w *recorder) WriteHeader(status int) {
	if !w.written {
		w.status, w.written = status, true
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *recorder) Write(b []byte) (int, error) {
	w.written = true
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

func (w *recorder) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// access writes the request's line.
func (sv *server) access(rec *record, w *recorder, r *http.Request) {
	attrs := []any{"remote", r.RemoteAddr, "http_method", r.Method, "path", r.URL.Path,
		"status", w.status, "bytes", w.bytes, "ms", time.Since(rec.start).Milliseconds(), "auth", rec.auth}
	if rec.method != "" {
		attrs = append(attrs, "rpc", rec.method)
	}
	if rec.tool != "" {
		attrs = append(attrs, "tool", rec.tool)
	}
	rec.mu.Lock()
	if len(rec.decisions) > 0 {
		var list []map[string]string
		for _, d := range rec.decisions {
			m := map[string]string{"tool": d.Tool, "decision": d.Decision, "by": d.By}
			if d.Program != "" {
				m["program"] = d.Program
			}
			if d.How != "" {
				m["how"] = d.How
			}
			list = append(list, m)
		}
		attrs = append(attrs, slog.Any("decisions", list))
	}
	rec.mu.Unlock()
	if id := r.Header.Get("Mcp-Session-Id"); id != "" {
		h := sha256.Sum256([]byte(id))
		attrs = append(attrs, "session", hex.EncodeToString(h[:6]))
	}
	if id := r.Header.Get("X-Sandbox-ID"); id != "" {
		attrs = append(attrs, "sandbox", id)
	}
	sv.log.Info("request", attrs...)
}
