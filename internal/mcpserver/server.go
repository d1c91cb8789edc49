// Package mcpserver is `hunk mcp`: a stdio MCP server, on the official Go
// SDK, serving a tool set of package tools over one workspace. Roots the
// client sends may narrow the workspace, never widen it.
package mcpserver

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/tools"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// Options configure the server.
type Options struct {
	Version string
	Tools   tools.Set
	// Session is the session every call runs in (its workspace is -C).
	Session *tools.Session
	// Log receives the server's own messages (stderr); nil drops them.
	Log io.Writer
}

// New returns the MCP server for opts.
func New(opts Options) *mcp.Server {
	s := &server{opts: opts}
	srv := mcp.NewServer(&mcp.Implementation{Name: "hunk", Title: "hunk", Version: opts.Version}, &mcp.ServerOptions{
		Instructions: "hunk's tools work inside one workspace: " + opts.Session.Env.Workspace.Dir() +
			". Paths are relative to it; nothing outside it can be read or written.",
		// The client's roots are asked for once the session is initialized
		// and again when they change: a server may not send requests while
		// it serves one (protocol 2026-07-28).
		InitializedHandler: func(_ context.Context, req *mcp.InitializedRequest) { s.fetchRoots(req.Session) },
		RootsListChangedHandler: func(_ context.Context, req *mcp.RootsListChangedRequest) {
			s.fetchRoots(req.Session)
		},
	})
	for _, t := range opts.Tools {
		srv.AddTool(Declaration(t), s.handler(t))
	}
	return srv
}

// Declaration is t as an MCP tool, with every annotation explicit.
func Declaration(t *tools.Tool) *mcp.Tool {
	destructive, openWorld := t.Destructive, t.OpenWorld
	return &mcp.Tool{
		Name:         t.Name,
		Title:        t.Title,
		Description:  t.Description,
		InputSchema:  t.Input,
		OutputSchema: t.Output,
		Annotations: &mcp.ToolAnnotations{
			Title:           t.Title,
			ReadOnlyHint:    t.ReadOnly,
			DestructiveHint: &destructive,
			IdempotentHint:  t.Idempotent,
			OpenWorldHint:   &openWorld,
		},
	}
}

// Serve runs the server over in and out until in ends (and every request
// read has been answered) or ctx is done.
func Serve(ctx context.Context, opts Options, in io.Reader, out io.Writer) error {
	srv := New(opts)
	t := newTransport(in, out)
	err := srv.Run(ctx, t)
	if err != nil && (strings.Contains(err.Error(), "EOF") || ctx.Err() != nil) {
		return nil
	}
	return err
}

type server struct {
	opts Options

	mu       sync.Mutex
	narrowed *tools.Session // the session under the client's roots; nil: the base
	ready    chan struct{}  // closed once the roots asked for are known; nil: none asked
}

func (s *server) logf(format string, args ...any) {
	if s.opts.Log != nil {
		fmt.Fprintf(s.opts.Log, "hunk mcp: "+format+"\n", args...)
	}
}

func (s *server) handler(t *tools.Tool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		sess := s.session(ctx)
		r := t.Call(ctx, sess, req.Params.Arguments)
		return callResult(t, r), nil
	}
}

// IgnoredMeta is the _meta key of the arguments a filesystem tool passed
// over (it does not know them, and as the reference server it does not
// refuse them).
const IgnoredMeta = "dev.hunk/ignoredArguments"

// callResult is a tool result as MCP's: content blocks, the details as
// structuredContent, isError with hunk's code.
func callResult(t *tools.Tool, r result.ToolResult) *mcp.CallToolResult {
	out := &mcp.CallToolResult{IsError: r.IsError, StructuredContent: t.Structured(r)}
	if len(r.Ignored) > 0 {
		out.Meta = mcp.Meta{IgnoredMeta: r.Ignored}
	}
	for _, c := range r.Content {
		switch c.Type {
		case "resource":
			data, err := base64.StdEncoding.DecodeString(c.Data)
			if err != nil {
				continue
			}
			out.Content = append(out.Content, &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: c.URI, MIMEType: c.MimeType, Blob: data}})
		case "image", "audio":
			data, err := base64.StdEncoding.DecodeString(c.Data)
			if err != nil {
				continue
			}
			if c.Type == "audio" {
				out.Content = append(out.Content, &mcp.AudioContent{Data: data, MIMEType: c.MimeType})
			} else {
				out.Content = append(out.Content, &mcp.ImageContent{Data: data, MIMEType: c.MimeType})
			}
		default:
			text := c.Text
			if r.IsError && r.Code != "" {
				text = "[" + string(r.Code) + "] " + text
			}
			out.Content = append(out.Content, &mcp.TextContent{Text: text})
		}
	}
	return out
}

// fetchRoots asks the client for its roots, in the background, if it has any.
func (s *server) fetchRoots(ss *mcp.ServerSession) {
	if ss == nil {
		return
	}
	p := ss.InitializeParams()
	if p == nil || p.Capabilities == nil || p.Capabilities.RootsV2 == nil {
		return
	}
	ready := make(chan struct{})
	s.mu.Lock()
	s.ready = ready
	s.mu.Unlock()
	go func() {
		defer close(ready)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		res, err := ss.ListRoots(ctx, &mcp.ListRootsParams{})
		if err != nil {
			s.logf("the client's roots could not be listed (%v); serving the whole workspace", err)
			return
		}
		n := s.narrow(res.Roots)
		s.mu.Lock()
		s.narrowed = n
		s.mu.Unlock()
	}()
}

// session is the session a call runs in: the base one, or the one narrowed
// to the client's roots once they are known.
func (s *server) session(ctx context.Context) *tools.Session {
	s.mu.Lock()
	ready := s.ready
	s.mu.Unlock()
	if ready != nil {
		select {
		case <-ready:
		case <-ctx.Done():
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.narrowed != nil {
		return s.narrowed
	}
	return s.opts.Session
}

// narrow is the base session narrowed to the first root that lies inside
// the workspace (nil: none does). Roots outside it are ignored: a client can
// narrow what hunk may touch, never widen it.
func (s *server) narrow(roots []*mcp.Root) *tools.Session {
	base := s.opts.Session
	wsDir := base.Env.Workspace.Dir()
	for _, r := range roots {
		u, err := url.Parse(r.URI)
		if err != nil || u.Scheme != "file" {
			continue
		}
		dir, err := filepath.EvalSymlinks(filepath.FromSlash(u.Path))
		if err != nil {
			continue
		}
		rel, err := filepath.Rel(wsDir, dir)
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue // the workspace itself, or outside it: no narrowing
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		ws, err := workspace.Open(dir, true)
		if err != nil {
			continue
		}
		ws.Durable = base.Env.Workspace.Durable
		env := *base.Env
		env.Workspace = ws
		n := *base
		n.Env = &env
		s.logf("workspace narrowed to the client's root %s", dir)
		return &n
	}
	return nil
}
