package httpapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/stowage/stowage"
)

// Bulk operations over HTTP: one request, many entries (stowage.Map's
// PutAll, GetAll and RemoveAll: one call per owner, each entry
// acknowledged as a single PUT would be).
//
//	POST /v1/maps/{map}/bulk/put     {"entries":[{"key":"k","value":"v"},...]}
//	POST /v1/maps/{map}/bulk/get     {"keys":["k",...]}
//	POST /v1/maps/{map}/bulk/remove  {"keys":["k",...]}
//
// Values are text, or base64 with ?encoding=base64 (in the request and
// the answer alike). put takes ?ttl= as a PUT does; every request takes
// ?timeout= (a Go duration, at most maxBulkTimeout) to bound it, and an
// owner parameter as the single writes do. A body over maxBulkBody is a
// 413 and more than maxBulkEntries keys a 400, each naming the limit. A
// bulk write is not atomic: when keys fail, the answer's status is the
// first failure's and "failed" names each failed key with its error; the
// keys not named were written.

const (
	// maxBulkBody bounds a bulk request's body.
	maxBulkBody = 32 << 20
	// maxBulkEntries bounds the keys of one bulk request.
	maxBulkEntries = 10000
	// maxBulkTimeout bounds ?timeout=.
	maxBulkTimeout = 5 * time.Minute
)

type bulkEntry struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

type bulkRequest struct {
	Entries []bulkEntry `json:"entries,omitempty"` // put
	Keys    []string    `json:"keys,omitempty"`    // get, remove
}

type keyFailure struct {
	Key   string `json:"key"`
	Error string `json:"error"`
}

// bulkBase64 reports whether the request's values are base64 (else
// text), or answers a bad encoding.
func bulkBase64(w http.ResponseWriter, r *http.Request) (b64, ok bool) {
	switch e := r.URL.Query().Get("encoding"); e {
	case "", "text":
		return false, true
	case "base64":
		return true, true
	default:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": fmt.Sprintf("encoding %q: want text or base64", e)})
		return false, false
	}
}

// readBulk reads and checks a bulk request: its size, its keys and, for a
// put, its values.
func readBulk(w http.ResponseWriter, r *http.Request, put bool) (*bulkRequest, bool) {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBulkBody))
	dec.DisallowUnknownFields()
	var req bulkRequest
	err := dec.Decode(&req)
	if err == nil && dec.More() {
		err = errors.New("more than one JSON value")
	}
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		writeJSON(w, http.StatusRequestEntityTooLarge, map[string]string{
			"error": fmt.Sprintf("the body is over the bulk request limit of %d bytes (%d MiB); send the entries in several requests", maxBulkBody, maxBulkBody>>20)})
		return nil, false
	case errors.Is(err, io.ErrUnexpectedEOF) && r.Context().Err() != nil:
		writeJSON(w, http.StatusRequestTimeout, map[string]string{"error": "the body was not received in time or was cut off"})
		return nil, false
	case err != nil:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "the body is not a bulk request: " + err.Error()})
		return nil, false
	}
	n, what := len(req.Keys), "keys"
	if put {
		n, what = len(req.Entries), "entries"
	}
	var bad string
	switch {
	case put && len(req.Keys) > 0:
		bad = `a put takes "entries", not "keys"`
	case !put && len(req.Entries) > 0:
		bad = `this operation takes "keys", not "entries"`
	case n > maxBulkEntries:
		bad = fmt.Sprintf("%d %s, over the limit of %d per request; send them in several requests", n, what, maxBulkEntries)
	}
	for i := 0; bad == "" && i < n; i++ {
		k := ""
		if put {
			k = req.Entries[i].Key
		} else {
			k = req.Keys[i]
		}
		if k == "" || !utf8.ValidString(k) {
			bad = fmt.Sprintf("%s %d: the key is empty or not UTF-8", what, i)
		}
	}
	if bad != "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": bad})
		return nil, false
	}
	return &req, true
}

// bulkContext is the request's context with its lock owner and
// ?timeout=.
func bulkContext(w http.ResponseWriter, r *http.Request) (context.Context, context.CancelFunc, bool) {
	ctx, ok := ownerContext(w, r)
	if !ok {
		return nil, nil, false
	}
	d, err := duration(r, "timeout", maxBulkTimeout)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return nil, nil, false
	}
	if d > 0 {
		c, cancel := context.WithTimeout(ctx, d)
		return c, cancel, true
	}
	return ctx, func() {}, true
}

// writeBulkError answers a bulk operation that failed: the status of the
// first failure, and each failed key with its error.
func writeBulkError(w http.ResponseWriter, err error, extra map[string]any) {
	var be *stowage.BulkError[string]
	if !errors.As(err, &be) || len(be.Failed) == 0 {
		writeError(w, err)
		return
	}
	failed := make([]keyFailure, len(be.Failed))
	for i, f := range be.Failed {
		failed[i] = keyFailure{Key: f.Key, Error: publicError(f.Err)}
	}
	body := map[string]any{"error": fmt.Sprintf("%d of the keys failed", len(failed)), "failed": failed}
	for k, v := range extra {
		body[k] = v
	}
	writeJSON(w, errorStatus(be.Failed[0].Err), body)
}

func (a *api) bulkPut(w http.ResponseWriter, r *http.Request) {
	b64, ok := bulkBase64(w, r)
	if !ok {
		return
	}
	ttl, hasTTL, err := parseTTL(r.URL.Query().Get("ttl"))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	req, ok := readBulk(w, r, true)
	if !ok {
		return
	}
	entries := make([]stowage.Entry[string, []byte], len(req.Entries))
	for i, e := range req.Entries {
		entries[i].Key, entries[i].Value = e.Key, []byte(e.Value)
		if b64 {
			if entries[i].Value, err = base64.StdEncoding.DecodeString(e.Value); err != nil {
				writeJSON(w, http.StatusBadRequest, map[string]string{"error": fmt.Sprintf("the value of key %q is not base64: %v", e.Key, err)})
				return
			}
		}
	}
	m := a.open(w, r)
	if m == nil {
		return
	}
	ctx, cancel, ok := bulkContext(w, r)
	if !ok {
		return
	}
	defer cancel()
	if hasTTL {
		err = m.PutAllWithTTL(ctx, entries, ttl)
	} else {
		err = m.PutAll(ctx, entries)
	}
	if err != nil {
		writeBulkError(w, err, nil)
		return
	}
	writeJSON(w, http.StatusOK, map[string]int{"written": len(entries)})
}

func (a *api) bulkGet(w http.ResponseWriter, r *http.Request) {
	b64, ok := bulkBase64(w, r)
	if !ok {
		return
	}
	req, ok := readBulk(w, r, false)
	if !ok {
		return
	}
	m := a.lookup(w, r)
	if m == nil {
		return
	}
	ctx, cancel, ok := bulkContext(w, r)
	if !ok {
		return
	}
	defer cancel()
	got, err := m.GetAll(ctx, req.Keys)
	if err != nil {
		writeBulkError(w, err, nil)
		return
	}
	found := make(map[string]bool, len(got))
	resp := struct {
		Entries []bulkEntry `json:"entries"`
		Missing []string    `json:"missing"`
	}{Entries: make([]bulkEntry, 0, len(got)), Missing: []string{}}
	for _, e := range got {
		found[e.Key] = true
		v := string(e.Value)
		if b64 {
			v = base64.StdEncoding.EncodeToString(e.Value)
		}
		resp.Entries = append(resp.Entries, bulkEntry{Key: e.Key, Value: v})
	}
	for _, k := range req.Keys {
		if !found[k] {
			found[k] = true
			resp.Missing = append(resp.Missing, k)
		}
	}
	writeJSON(w, http.StatusOK, resp)
}

func (a *api) bulkRemove(w http.ResponseWriter, r *http.Request) {
	req, ok := readBulk(w, r, false)
	if !ok {
		return
	}
	m := a.open(w, r)
	if m == nil {
		return
	}
	ctx, cancel, ok := bulkContext(w, r)
	if !ok {
		return
	}
	defer cancel()
	n, err := m.RemoveAll(ctx, req.Keys)
	if err != nil {
		writeBulkError(w, err, map[string]any{"removed": n})
		return
	}
	writeJSON(w, http.StatusOK, map[string]int{"removed": n})
}
