package mcpserver

// The protocol's eras, on one stdio connection. Legacy (2024-11-05 to
// 2025-11-25): initialize, then requests. Stateless (2026-07-28): every
// request carries its protocol version and the client's capabilities in
// params._meta; there is no initialize (a ping is answered all the same), server/discover says
// what the server is, and every result says it is complete (resultType)
// and who answered (_meta serverInfo). The first request pins the
// connection to its era; a request of the other era is refused, saying so.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

const (
	statelessVersion = "2026-07-28"
	metaVersion      = "io.modelcontextprotocol/protocolVersion"
	metaCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaServerInfo   = "io.modelcontextprotocol/serverInfo"
	// codeUnsupportedVersion answers a stateless request of a version hunk
	// does not serve (its data lists those it does).
	codeUnsupportedVersion = -32022
	// listTTL is how long a client may cache tools/list and
	// server/discover: they never change while this hunk mcp runs.
	listTTL = 3_600_000
)

// era is a connection's protocol era, pinned by its first request.
type era int

const (
	eraUnknown era = iota
	eraLegacy
	eraStateless
)

// allVersions are every version served, newest first.
func allVersions() []string { return append([]string{statelessVersion}, protocolVersions...) }

// requestEra reads a request's era from its params' _meta: stateless when
// it names a version of 2026-07-28 or later (which must be one hunk serves,
// with the client's capabilities beside it), legacy otherwise.
func requestEra(params json.RawMessage) (era, *rpcError) {
	if !bytes.Contains(params, []byte(metaVersion)) {
		return eraLegacy, nil // the common case, decided without decoding
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil || p.Meta[metaVersion] == nil {
		return eraLegacy, nil
	}
	var v string
	if json.Unmarshal(p.Meta[metaVersion], &v) != nil || v < statelessVersion {
		return eraLegacy, nil
	}
	if v != statelessVersion {
		data, _ := json.Marshal(map[string]any{"supported": allVersions(), "requested": v})
		return eraStateless, &rpcError{Code: codeUnsupportedVersion, Message: fmt.Sprintf("unsupported protocol version %q: hunk serves %s", v, statelessVersion), Data: data}
	}
	var caps map[string]json.RawMessage
	if c := p.Meta[metaCapabilities]; c == nil || json.Unmarshal(c, &caps) != nil {
		return eraStateless, &rpcError{Code: codeInvalidParams, Message: fmt.Sprintf("Invalid params: a %s request carries _meta %q, an object", statelessVersion, metaCapabilities)}
	}
	return eraStateless, nil
}

// pin pins the connection to e on its first request, or refuses a request
// of the other era.
func (c *conn) pin(e era, method string) *rpcError {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.era == eraUnknown {
		c.era = e
		return nil
	}
	switch {
	case c.era == e:
		return nil
	case slices.Contains(removedInStateless, method):
		return statelessOnly(eraStateless, method)
	case e == eraStateless:
		return &rpcError{Code: codeInvalidRequest, Message: fmt.Sprintf("Invalid Request: this connection began in the legacy protocol (initialize); a %s request (_meta %q) needs a connection of its own", statelessVersion, metaVersion)}
	}
	return &rpcError{Code: codeInvalidRequest, Message: fmt.Sprintf("Invalid Request: %s on a %s connection needs _meta %q and %q", method, statelessVersion, metaVersion, metaCapabilities)}
}

// removedInStateless are the legacy methods 2026-07-28 has no more.
var removedInStateless = []string{"initialize", "notifications/initialized", "notifications/roots/list_changed", "logging/setLevel"}

// statelessOnly refuses, in the stateless era, what it removed; and in the
// legacy era, what only it has.
func statelessOnly(e era, method string) *rpcError {
	switch {
	case e == eraStateless && slices.Contains(removedInStateless, method):
		return &rpcError{Code: codeMethodNotFound, Message: fmt.Sprintf("Method not found: %s is not part of protocol %s (every request carries _meta instead)", method, statelessVersion)}
	case e == eraLegacy && method == "server/discover":
		return &rpcError{Code: codeMethodNotFound, Message: fmt.Sprintf("Method not found: server/discover is part of protocol %s: send it with _meta %q", statelessVersion, metaVersion)}
	}
	return nil
}

// Implementation names a server (serverInfo).
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// Capabilities are the server's: tools, whose list never changes.
type Capabilities struct {
	Tools struct {
		ListChanged bool `json:"listChanged"`
	} `json:"tools"`
}

// InitializeResult answers initialize (legacy).
type InitializeResult struct {
	ProtocolVersion string         `json:"protocolVersion"`
	Capabilities    Capabilities   `json:"capabilities"`
	ServerInfo      Implementation `json:"serverInfo"`
	Instructions    string         `json:"instructions,omitempty"`
}

// DiscoverResult answers server/discover (stateless).
type DiscoverResult struct {
	Meta              *Meta        `json:"_meta,omitempty"`
	SupportedVersions []string     `json:"supportedVersions"`
	Capabilities      Capabilities `json:"capabilities"`
	Instructions      string       `json:"instructions,omitempty"`
	Cache
	Complete
}

// Cache are a result's cache hints (stateless): how long a client may keep
// it, and for whom.
type Cache struct {
	TTLMs      int    `json:"ttlMs"`
	CacheScope string `json:"cacheScope"`
}

// Complete is what a stateless era's result says beside its own fields:
// that it is complete, and who answered (_meta serverInfo).
type Complete struct {
	ResultType string `json:"resultType,omitempty"`
}

// completer is a result that carries Complete and a _meta.
type completer interface {
	complete(info Implementation)
}

func (r *CallResult) complete(info Implementation) {
	r.ResultType = "complete"
	if r.Meta == nil {
		r.Meta = map[string]any{}
	}
	r.Meta[metaServerInfo] = info
}

func (r *ListResult) complete(info Implementation) {
	r.ResultType, r.Meta = "complete", &Meta{ServerInfo: info}
}

func (r *DiscoverResult) complete(info Implementation) {
	r.ResultType, r.Meta = "complete", &Meta{ServerInfo: info}
}

// Meta is a stateless result's _meta.
type Meta struct {
	ServerInfo Implementation `json:"io.modelcontextprotocol/serverInfo"`
}

// ListResult answers tools/list.
type ListResult struct {
	Meta  *Meta           `json:"_meta,omitempty"`
	Tools json.RawMessage `json:"tools"`
	*Cache
	Complete
}

// complete marks a stateless era's result res.
func (s *server) complete(res any) any {
	if c, ok := res.(completer); ok {
		c.complete(s.info())
	}
	return res
}

// info is hunk as serverInfo names it.
func (s *server) info() Implementation {
	return Implementation{Name: "hunk", Title: "hunk", Version: s.opts.Version}
}

// instructions are what a client may put before its model.
func (s *server) instructions() string {
	return "hunk's tools work inside one workspace: " + s.opts.Session.Env.Workspace.Dir() +
		". Paths are relative to it; nothing outside it can be read or written."
}

// discover answers server/discover: what initialize says, for every era
// served, cacheable by this client for the life of the server.
func (s *server) discover() *DiscoverResult {
	return &DiscoverResult{SupportedVersions: allVersions(), Instructions: s.instructions(), Cache: Cache{TTLMs: listTTL, CacheScope: "private"}}
}
