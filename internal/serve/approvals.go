package serve

// The operator's endpoint: a person's out-of-band yes to a plan a rule
// asked about (docs/approve.md), over HTTP for a server whose machine the
// person does not sit at. It has a token of its own (--approve-token-file),
// never the agent's: the agent's token reaches /mcp and /call only, and a
// model that can call tools can never approve what it asked for.

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/hunk-dev/hunk/internal/approval"
)

// approvals answers GET /approvals (what waits) and POST /approvals/ID
// (the operator's yes), under the operator's token.
func (sv *server) approvals(w http.ResponseWriter, r *http.Request, rec *record) {
	if sv.opts.ApproveToken == "" || sv.opts.Approvals == nil {
		sv.fail(w, r, http.StatusNotFound, "Not Found: this hunk serve takes no approvals over HTTP (start it with --approve-token-file FILE; or run hunk approve on its machine)")
		return
	}
	given := ""
	if scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " "); strings.EqualFold(scheme, "Bearer") {
		given = strings.TrimSpace(tok)
	}
	a, b := sha256.Sum256([]byte(given)), sha256.Sum256([]byte(sv.opts.ApproveToken))
	if given == "" || subtle.ConstantTimeCompare(a[:], b[:]) != 1 {
		rec.auth = "refused"
		w.Header().Set("WWW-Authenticate", `Bearer realm="hunk approvals"`)
		sv.fail(w, r, http.StatusUnauthorized, "Unauthorized: /approvals takes the operator's token (--approve-token-file), never the agent's")
		return
	}
	rec.auth = "operator"
	id, one := strings.CutPrefix(r.URL.Path, "/approvals/")
	switch {
	case !one && r.Method == http.MethodGet:
		list, err := sv.opts.Approvals.List()
		if err != nil {
			sv.fail(w, r, http.StatusInternalServerError, "Internal Server Error: the approvals: "+err.Error())
			return
		}
		if list == nil {
			list = []approval.Plan{}
		}
		writeJSON(w, http.StatusOK, map[string]any{"plans": list})
	case one && r.Method == http.MethodPost:
		p, err := sv.opts.Approvals.Approve(id, "hunk serve operator ("+r.RemoteAddr+")")
		switch {
		case errors.Is(err, approval.ErrNotFound):
			sv.fail(w, r, http.StatusNotFound, "Not Found: no plan "+id+" waits for a yes (it expired, was taken, or was never asked)")
		case err != nil:
			sv.fail(w, r, http.StatusBadRequest, "Bad Request: "+err.Error())
		default:
			writeJSON(w, http.StatusOK, map[string]any{"plan": p})
		}
	default:
		w.Header().Set("Allow", "GET /approvals, POST /approvals/ID")
		sv.fail(w, r, http.StatusMethodNotAllowed, "Method Not Allowed: GET /approvals lists the plans waiting; POST /approvals/ID says yes to one")
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(v)
	w.Write(append(b, '\n'))
}
