package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/stowage/stowage"
)

// Per-key locks over HTTP (see the package doc). The lock owner is the
// request's owner parameter (or X-Stowage-Lock-Owner header); a POST
// without one gets a new owner id in its answer, which the client then
// passes to unlock, to lock again (reentrant) and to its writes.

// Bounds of a lock request's parameters: a POST holds its connection for
// at most maxLockWait, and a lock lasts at most maxLockLease.
const (
	maxLockWait  = 5 * time.Minute
	maxLockLease = 24 * time.Hour
	maxOwnerLen  = 256
)

// lockOwnerHeader carries the lock owner when the query does not.
const lockOwnerHeader = "X-Stowage-Lock-Owner"

// lockOwner returns the request's lock owner ("" if none), or an error
// naming the parameter.
func lockOwner(r *http.Request) (string, error) {
	o := r.URL.Query().Get("owner")
	if o == "" {
		o = r.Header.Get(lockOwnerHeader)
	}
	if len(o) > maxOwnerLen {
		return "", fmt.Errorf("owner: longer than %d bytes", maxOwnerLen)
	}
	return o, nil
}

// ownerContext returns the request's context carrying its lock owner, if
// it names one: a write with the holder's owner passes its lock.
func ownerContext(w http.ResponseWriter, r *http.Request) (context.Context, bool) {
	o, err := lockOwner(r)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return nil, false
	}
	if o == "" {
		return r.Context(), true
	}
	return stowage.WithLockOwner(r.Context(), o), true
}

// duration parses query parameter name (a Go duration such as "5s"; 0
// when absent) and bounds it by limit.
func duration(r *http.Request, name string, limit time.Duration) (time.Duration, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d > limit {
		return 0, fmt.Errorf("%s: want a duration from 0 to %s, such as 5s or 250ms", name, limit)
	}
	return d, nil
}

type lockAnswer struct {
	Owner string               `json:"owner"`
	Token stowage.FencingToken `json:"token"`
	Fence string               `json:"fence"` // the token as "epoch.seq"
}

// lock takes a key's lock: ?lease=&wait=&owner=. 200 with the owner and
// the fencing token; 409 when another owner still held it after wait.
func (a *api) lock(w http.ResponseWriter, r *http.Request) {
	owner, err := lockOwner(r)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	lease, err := duration(r, "lease", maxLockLease)
	if err == nil {
		var wait time.Duration
		if wait, err = duration(r, "wait", maxLockWait); err == nil {
			a.tryLock(w, r, owner, wait, lease)
			return
		}
	}
	writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
}

func (a *api) tryLock(w http.ResponseWriter, r *http.Request, owner string, wait, lease time.Duration) {
	m := a.open(w, r)
	if m == nil {
		return
	}
	if owner == "" {
		owner = stowage.NewLockOwner()
	}
	tok, ok, err := m.TryLock(stowage.WithLockOwner(r.Context(), owner), r.PathValue("key"), wait, lease)
	if err != nil {
		writeError(w, err)
		return
	}
	if !ok {
		writeJSON(w, http.StatusConflict, map[string]string{"error": "the key is locked by another owner"})
		return
	}
	writeJSON(w, http.StatusOK, lockAnswer{Owner: owner, Token: tok, Fence: tok.String()})
}

// unlock releases one hold of a key's lock by ?owner=, or with
// ?force=true the lock whoever holds it. 204; 409 when the owner does
// not hold it.
func (a *api) unlock(w http.ResponseWriter, r *http.Request) {
	owner, err := lockOwner(r)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	force := r.URL.Query().Get("force") == "true"
	if owner == "" && !force {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "owner: required (or force=true)"})
		return
	}
	m := a.open(w, r)
	if m == nil {
		return
	}
	if force {
		err = m.ForceUnlock(r.Context(), r.PathValue("key"))
	} else {
		err = m.Unlock(stowage.WithLockOwner(r.Context(), owner), r.PathValue("key"))
	}
	if errors.Is(err, stowage.ErrNotLockHolder) {
		writeJSON(w, http.StatusConflict, map[string]string{"error": err.Error()})
		return
	}
	if err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// isLocked answers {"locked": bool}; a key of a map that does not exist
// is not locked.
func (a *api) isLocked(w http.ResponseWriter, r *http.Request) {
	m := a.lookup(w, r) // a read: it makes no map
	if m == nil {
		return
	}
	locked, err := m.IsLocked(r.Context(), r.PathValue("key"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"locked": locked})
}
