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
func (c *conn) fetchRoots() {
	c.mu.Lock()
	if !c.roots {
		c.mu.Unlock()
		return
	}
	ready := make(chan struct{})
	c.ready = ready
	c.mu.Unlock()
	go func() {
		defer close(ready)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		m, err := c.request(ctx, "roots/list", struct{}{})
		var res struct {
			Roots []struct {
				URI string `json:"uri"`
			} `json:"roots"`
		}
		if err == nil {
			err = json.Unmarshal(m.Result, &res)
		}
		if err != nil {
			c.logf("the client's roots could not be listed (%v); serving the whole workspace", err)
			return
		}
		var uris []string
		for _, r := range res.Roots {
			uris = append(uris, r.URI)
		}
		n := c.narrow(uris)
		c.mu.Lock()
		c.narrowed = n
		c.mu.Unlock()
	}()
}

// session is the session a call runs in: the base one, or the one narrowed
// to the client's roots once they are known.
func (c *conn) session(ctx context.Context) *tools.Session {
	c.mu.Lock()
	ready := c.ready
	c.mu.Unlock()
	if ready != nil {
		select {
		case <-ready:
		case <-ctx.Done():
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.base
	if c.narrowed != nil {
		s = c.narrowed
	}
	if c.elicit {
		cp := *s
		cp.Confirm = c.confirm // the person answers through the client
		cp.ConfirmWrite = c.confirmWrite
		return &cp
	}
	return s
}

// narrow is the base session narrowed to the first root that lies inside
// the workspace (nil: none does). Roots outside it are ignored: a client can
// narrow what hunk may touch, never widen it.
func (c *conn) narrow(roots []string) *tools.Session {
	base := c.base
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
		c.logf("workspace narrowed to the client's root %s", dir)
		return &n
	}
	return nil
}
