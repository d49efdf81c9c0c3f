package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sort"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/checkpoint"
	"github.com/stowage/stowage/internal/logscrub"
	"github.com/stowage/stowage/serde"
	"github.com/stowage/stowage/serde/record"
)

// maxValue bounds a PUT's body: a value must fit one store record with
// its key and framing.
const maxValue = record.MaxPayload - 4096

// Option configures Handler.
type Option func(*api)

// WithCheckpoints shows the jobs of checkpoint storage st (from
// stowage.OpenCheckpointStorage) in GET /v1/status and on the status
// page. The caller keeps it and closes it after the handler's last use.
func WithCheckpoints(st checkpoint.Storage) Option {
	return func(a *api) { a.checkpoints = st }
}

// Handler returns the HTTP API of node n (see the package doc).
func Handler(n *stowage.Node, opts ...Option) http.Handler {
	a := &api{n: n}
	for _, o := range opts {
		o(a)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", servePage)
	mux.Handle("GET /ui/", http.StripPrefix("/ui/", http.HandlerFunc(serveUI)))
	mux.HandleFunc("GET /v1/status", a.status)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such endpoint: " + r.Method + " " + r.URL.Path})
	})
	mux.HandleFunc("PUT /v1/maps/{map}/entries/{key...}", a.put)
	mux.HandleFunc("GET /v1/maps/{map}/entries/{key...}", a.get)
	mux.HandleFunc("DELETE /v1/maps/{map}/entries/{key...}", a.delete)
	mux.HandleFunc("GET /v1/maps/{map}/entries", a.keys)
	mux.HandleFunc("POST /v1/maps/{map}/bulk/put", a.bulkPut)
	mux.HandleFunc("POST /v1/maps/{map}/bulk/get", a.bulkGet)
	mux.HandleFunc("POST /v1/maps/{map}/bulk/remove", a.bulkRemove)
	mux.HandleFunc("POST /v1/maps/{map}/locks/{key...}", a.lock)
	mux.HandleFunc("DELETE /v1/maps/{map}/locks/{key...}", a.unlock)
	mux.HandleFunc("GET /v1/maps/{map}/locks/{key...}", a.isLocked)
	mux.HandleFunc("POST /v1/maps/{map}/flush", a.flush)
	mux.HandleFunc("GET /v1/maps/{map}", a.mapInfo)
	mux.HandleFunc("GET /v1/maps", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, n.Maps()) })
	mux.HandleFunc("GET /v1/cluster", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, n.Cluster(r.Context()))
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		if ok, why := n.LoadState(r.Context()); !ok {
			http.Error(w, "loading: "+why, http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ok\n")
	})
	g := n.Gatherer()
	if g == nil {
		g = prometheus.DefaultGatherer
	}
	mux.Handle("GET /metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	return guard(a.sec, mux)
}

type api struct {
	n           *stowage.Node
	checkpoints checkpoint.Storage // nil: none given
	sec         Security           // auth.go
}

// bytesMap is a map as the HTTP API sees it: keys are the raw bytes of
// the path segment, values the raw bytes of the body.
type bytesMap = stowage.Map[string, []byte]

// open returns the request's map for a write: created on first use.
func (a *api) open(w http.ResponseWriter, r *http.Request) *bytesMap {
	m, err := stowage.GetMap(r.Context(), a.n, r.PathValue("map"), serde.String(), serde.Bytes())
	if err != nil {
		writeError(w, err)
		return nil
	}
	return m
}

// lookup returns the request's map for a read: reading a map that does
// not exist creates nothing.
func (a *api) lookup(w http.ResponseWriter, r *http.Request) *bytesMap {
	m, err := stowage.LookupMap(a.n, r.PathValue("map"), serde.String(), serde.Bytes())
	if err != nil {
		writeError(w, err)
		return nil
	}
	return m
}

// exists reports whether a map this member does not hold has entries
// anywhere (found is what a read of it found); a map no member holds is
// answered 404.
func (a *api) exists(name string, found bool) bool {
	_, held := a.n.MapInfo(name)
	return held || found
}

func (a *api) put(w http.ResponseWriter, r *http.Request) {
	ttl, hasTTL, err := parseTTL(r.URL.Query().Get("ttl"))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	m := a.open(w, r)
	if m == nil {
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxValue))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		writeJSON(w, http.StatusRequestEntityTooLarge, map[string]string{"error": err.Error()})
		return
	case err != nil:
		// The body deadline passed or the client went away (server.go).
		writeJSON(w, http.StatusRequestTimeout, map[string]string{"error": "the body was not received in time or was cut off"})
		return
	}
	ctx, ok := ownerContext(w, r)
	if !ok {
		return
	}
	if hasTTL {
		err = m.PutWithTTL(ctx, r.PathValue("key"), body, ttl)
	} else {
		err = m.Put(ctx, r.PathValue("key"), body)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (a *api) get(w http.ResponseWriter, r *http.Request) {
	m := a.lookup(w, r)
	if m == nil {
		return
	}
	v, ok, err := m.Get(r.Context(), r.PathValue("key"))
	if err != nil {
		writeError(w, err)
		return
	}
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such key"})
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Write(v)
}

func (a *api) delete(w http.ResponseWriter, r *http.Request) {
	m := a.open(w, r)
	if m == nil {
		return
	}
	ctx, ok := ownerContext(w, r)
	if !ok {
		return
	}
	_, removed, err := m.Remove(ctx, r.PathValue("key"))
	if err != nil {
		writeError(w, err)
		return
	}
	if !removed {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such key"})
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// keys pages through the keys in byte order: ?limit=N&after=KEY.
func (a *api) keys(w http.ResponseWriter, r *http.Request) {
	m := a.lookup(w, r)
	if m == nil {
		return
	}
	limit := 1000
	if s := r.URL.Query().Get("limit"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "limit: must be a positive integer"})
			return
		}
		limit = v
	}
	after := r.URL.Query().Get("after")
	var keys []string
	if err := m.Range(r.Context(), func(k string, _ []byte) bool {
		if k > after {
			keys = append(keys, k)
		}
		return true
	}); err != nil {
		writeError(w, err)
		return
	}
	if !a.exists(m.Name(), len(keys) > 0 || after != "") {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such map"})
		return
	}
	sort.Strings(keys)
	resp := struct {
		Keys []string `json:"keys"`
		Next string   `json:"next,omitempty"`
	}{Keys: keys}
	if len(keys) > limit {
		resp.Keys = keys[:limit]
		resp.Next = keys[limit-1]
	}
	if resp.Keys == nil {
		resp.Keys = []string{}
	}
	writeJSON(w, http.StatusOK, resp)
}

func (a *api) mapInfo(w http.ResponseWriter, r *http.Request) {
	m := a.lookup(w, r)
	if m == nil {
		return
	}
	size, err := m.Size(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	mi, held := a.n.MapInfo(m.Name())
	if !held && size == 0 {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such map"})
		return
	}
	if !held {
		mi.Name = m.Name()
	}
	writeJSON(w, http.StatusOK, struct {
		stowage.MapInfo
		Size int `json:"size"`
	}{mi, size})
}

// flush stores the map's write-behind queues on every member (Map.Flush);
// 204 once stored, also for a map written through.
func (a *api) flush(w http.ResponseWriter, r *http.Request) {
	m := a.lookup(w, r)
	if m == nil {
		return
	}
	if err := m.Flush(r.Context()); err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// writeError answers err with the status that says whose fault it was.
func writeError(w http.ResponseWriter, err error) {
	writeJSON(w, errorStatus(err), map[string]string{"error": publicError(err)})
}

// errorStatus is the status that says whose fault err was.
func errorStatus(err error) int {
	switch {
	case errors.Is(err, stowage.ErrInvalidMapName):
		return http.StatusBadRequest
	case errors.Is(err, stowage.ErrClosed), errors.Is(err, stowage.ErrNoQuorum), errors.Is(err, stowage.ErrNamespaceLeaseLost),
		errors.Is(err, stowage.ErrQueueFull):
		return http.StatusServiceUnavailable
	case errors.Is(err, stowage.ErrIndeterminate), errors.Is(err, context.DeadlineExceeded):
		// The write may or may not have taken effect.
		return http.StatusGatewayTimeout
	}
	return http.StatusInternalServerError
}

// publicError is err's message as an answer may carry it: no server
// path.
func publicError(err error) string { return logscrub.Paths(err.Error()) }
