package mcpserver

// The client's roots: asked for once the client is ready, and the
// workspace narrowed to them (never widened).

import (
	"context"
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/hunk-dev/hunk/internal/tools"
)

// fetchRoots asks the client for its roots, in the background, if it has
// any; calls wait for the answer.
func (s *server) fetchRoots() {
	s.mu.Lock()
	if !s.roots {
		s.mu.Unlock()
		return
	}
	ready := make(chan struct{})
	s.ready = ready
	s.mu.Unlock()
	go func() {
		defer close(ready)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		m, err := s.request(ctx, "roots/list", struct{}{})
		var res struct {
			Roots []struct {
				URI string `json:"uri"`
			} `json:"roots"`
		}
		if err == nil {
			err = json.Unmarshal(m.Result, &res)
		}
		if err != nil {
			s.logf("the client's roots could not be listed (%v); serving the whole workspace", err)
			return
		}
		var uris []string
		for _, r := range res.Roots {
			uris = append(uris, r.URI)
		}
		n := s.narrow(uris)
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
func (s *server) narrow(roots []string) *tools.Session {
	base := s.opts.Session
	wsDir := base.Env.Workspace.Dir()
	for _, r := range roots {
		u, err := url.Parse(r)
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
		ws, err := base.Env.Workspace.Narrow(filepath.ToSlash(rel)) // every option carried, the rules decided as rel/NAME
		if err != nil {
			continue
		}
		env := *base.Env
		env.Workspace = ws
		n := *base
		n.Env = &env
		s.logf("workspace narrowed to the client's root %s", dir)
		return &n
	}
	return nil
}
