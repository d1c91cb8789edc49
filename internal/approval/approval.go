// Package approval keeps a person's yes given out of band: a call that
// needs confirmation and has no way to ask (hunk call, a client without
// elicitation, a script) leaves its plan here as asked, under an id; the
// person says yes with `hunk approve ID` on the machine; the same call made
// again finds the yes and takes it, once.
//
// The store lies in hunk's own state (Workspace.StateDir("approvals")),
// which no sandboxed command can reach: nothing a model can run can say
// yes. A yes is for one plan, named by the digest of everything the plan
// would do (for a change, every file's hash before and after, so a file
// changed since voids it); it expires, and a plan asked for and not
// approved expires too.
package approval

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// TTL is how long a plan asked for waits for a yes, and how long a yes
// waits for its call.
const TTL = 10 * time.Minute

// Plan is what is waiting for a person's yes, or has it.
type Plan struct {
	ID       string    `json:"id"`     // the short id a person types
	Digest   string    `json:"digest"` // sha256 of everything the plan would do
	Tool     string    `json:"tool"`
	Summary  string    `json:"summary"` // what it would do, one line
	Text     string    `json:"text"`    // what it would do, as a person reads it
	Asked    time.Time `json:"asked"`
	Expires  time.Time `json:"expires"`
	Approved time.Time `json:"approved,omitzero"`
	By       string    `json:"by,omitempty"` // who said yes
}

// Digest names a plan by its parts (each length-prefixed: no two lists of
// parts give the same digest): its id, 12 hex digits, and the full digest.
func Digest(parts ...string) (id, digest string) {
	h := sha256.New()
	var n [8]byte
	for _, p := range parts {
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write([]byte(p))
	}
	digest = hex.EncodeToString(h.Sum(nil))
	return digest[:12], digest
}

// Store is a workspace's approvals: a file a plan, named by its id.
type Store struct {
	dir string
	now func() time.Time
}

// Open is the store in dir (a private directory of hunk's state).
func Open(dir string) *Store { return &Store{dir: dir, now: time.Now} }

// ErrNotFound: no plan of that id waits (never asked, expired, or taken).
var ErrNotFound = errors.New("no plan of that id is waiting")

func validID(id string) bool {
	if len(id) != 12 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil && strings.ToLower(id) == id
}

func (s *Store) path(id string) string { return filepath.Join(s.dir, id+".json") }

// Ask records p as waiting for a yes (its times set now), unless a yes for
// it already waits: a call asked again keeps its approval.
func (s *Store) Ask(p Plan) (Plan, error) {
	if old, err := s.read(p.ID); err == nil && old.Digest == p.Digest && !old.Approved.IsZero() && s.now().Before(old.Expires) {
		return old, nil
	}
	now := s.now().UTC().Truncate(time.Second)
	p.Asked, p.Expires, p.Approved, p.By = now, now.Add(TTL), time.Time{}, ""
	return p, s.write(p)
}

// Approve gives the waiting plan id the person's yes (by: who), good for
// TTL from now.
func (s *Store) Approve(id, by string) (Plan, error) {
	id = strings.ToLower(strings.TrimSpace(id))
	if !validID(id) {
		return Plan{}, fmt.Errorf("%q is not a plan id (12 hex digits, as the refusal gave it)", id)
	}
	p, err := s.read(id)
	if err != nil {
		return Plan{}, err
	}
	now := s.now().UTC().Truncate(time.Second)
	if !now.Before(p.Expires) {
		_ = os.Remove(s.path(id))
		return Plan{}, ErrNotFound
	}
	p.Approved, p.By, p.Expires = now, by, now.Add(TTL)
	return p, s.write(p)
}

// Take is the yes for the plan of digest, used up: true once for each
// approval, before it expires, and never for a plan only asked for. The
// file is claimed by a rename, so two calls never both take one yes. A nil
// store (hunk has no state directory) holds no yes.
func (s *Store) Take(digest string) (Plan, bool) {
	if s == nil || len(digest) < 12 {
		return Plan{}, false
	}
	id := digest[:12]
	p, err := s.read(id)
	if err != nil || p.Digest != digest || p.Approved.IsZero() {
		return Plan{}, false
	}
	claimed := s.path(id) + ".taken." + strconv.Itoa(os.Getpid())
	if os.Rename(s.path(id), claimed) != nil {
		return Plan{}, false // another call took it
	}
	defer os.Remove(claimed)
	q, err := readPlan(claimed)
	if err != nil || q.Digest != digest || q.Approved.IsZero() || !s.now().Before(q.Expires) {
		return Plan{}, false
	}
	return q, true
}

// List is what waits, and the yeses not yet taken, oldest first; what
// expired is removed.
func (s *Store) List() ([]Plan, error) {
	es, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, err
	}
	var out []Plan
	now := s.now()
	for _, e := range es {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !validID(id) {
			continue
		}
		p, err := s.read(id)
		if err != nil {
			continue
		}
		if !now.Before(p.Expires) {
			_ = os.Remove(s.path(id))
			continue
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Asked.Equal(out[j].Asked) {
			return out[i].Asked.Before(out[j].Asked)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

func (s *Store) read(id string) (Plan, error) {
	if !validID(id) {
		return Plan{}, ErrNotFound
	}
	p, err := readPlan(s.path(id))
	if os.IsNotExist(err) {
		return Plan{}, ErrNotFound
	}
	return p, err
}

// readPlan reads a plan's file, never through a link.
func readPlan(path string) (Plan, error) {
	var p Plan
	fi, err := os.Lstat(path)
	if err != nil {
		return p, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > 1<<20 {
		return p, fmt.Errorf("%s is not a plan of hunk's: remove it", path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return p, err
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return p, fmt.Errorf("%s: %v", path, err)
	}
	return p, nil
}

// write puts p in place atomically (a temporary file renamed over it).
func (s *Store) write(p Plan) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(s.dir, ".plan-*")
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), s.path(p.ID))
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
