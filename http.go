package stowage

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

	"github.com/stowage/stowage/serde/record"
)

// Handler returns the node's HTTP API (see README): entries of maps as raw
// bytes (the key is the path segment's UTF-8 bytes, the value the body),
// map and cluster state, /healthz (200 once every map is loaded) and
// /metrics in the Prometheus format. A PUT answers only once durable.
func (n *Node) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /v1/maps/{map}/entries/{key...}", n.httpPut)
	mux.HandleFunc("GET /v1/maps/{map}/entries/{key...}", n.httpGet)
	mux.HandleFunc("DELETE /v1/maps/{map}/entries/{key...}", n.httpDelete)
	mux.HandleFunc("GET /v1/maps/{map}/entries", n.httpKeys)
	mux.HandleFunc("GET /v1/maps/{map}", n.httpMap)
	mux.HandleFunc("GET /v1/maps", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, n.Maps()) })
	mux.HandleFunc("GET /v1/cluster", n.httpCluster)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		if ok, why := n.loadedWhy(r.Context()); !ok {
			http.Error(w, "loading: "+why, http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ok\n")
	})
	var g prometheus.Gatherer = prometheus.DefaultGatherer
	if n.reg != nil {
		g = n.reg
	}
	mux.Handle("GET /metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	return mux
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func httpError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, ErrInvalidMapName):
		code = http.StatusBadRequest
	case errors.Is(err, ErrClosed), errors.Is(err, ErrNoQuorum):
		code = http.StatusServiceUnavailable
	case errors.Is(err, ErrIndeterminate), errors.Is(err, context.DeadlineExceeded):
		// The write may or may not have taken effect.
		code = http.StatusGatewayTimeout
	}
	writeJSON(w, code, map[string]string{"error": err.Error()})
}

func (n *Node) httpCore(w http.ResponseWriter, r *http.Request) *core {
	c, err := n.core(r.Context(), r.PathValue("map"))
	if err != nil {
		httpError(w, err)
		return nil
	}
	return c
}

func (n *Node) httpPut(w http.ResponseWriter, r *http.Request) {
	c := n.httpCore(w, r)
	if c == nil {
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, record.MaxPayload-4096))
	if err != nil {
		writeJSON(w, http.StatusRequestEntityTooLarge, map[string]string{"error": err.Error()})
		return
	}
	if _, err := n.do(r.Context(), c, []byte(r.PathValue("key")), &op{kind: opPut, val: body}); err != nil {
		httpError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (n *Node) httpGet(w http.ResponseWriter, r *http.Request) {
	c := n.httpCore(w, r)
	if c == nil {
		return
	}
	v, _, ok, err := n.get(r.Context(), c, []byte(r.PathValue("key")))
	if err != nil {
		httpError(w, err)
		return
	}
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such key"})
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Write(v)
}

func (n *Node) httpDelete(w http.ResponseWriter, r *http.Request) {
	c := n.httpCore(w, r)
	if c == nil {
		return
	}
	res, err := n.do(r.Context(), c, []byte(r.PathValue("key")), &op{kind: opDelete})
	if err != nil {
		httpError(w, err)
		return
	}
	if !res.had {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such key"})
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// httpKeys pages through the keys in byte order: ?limit=N&after=KEY.
func (n *Node) httpKeys(w http.ResponseWriter, r *http.Request) {
	c := n.httpCore(w, r)
	if c == nil {
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
	if err := n.rangeAll(r.Context(), c, func(k string, _ []byte) bool {
		if k > after {
			keys = append(keys, k)
		}
		return true
	}); err != nil {
		httpError(w, err)
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

func (n *Node) httpMap(w http.ResponseWriter, r *http.Request) {
	c := n.httpCore(w, r)
	if c == nil {
		return
	}
	size, err := n.size(r.Context(), c)
	if err != nil {
		httpError(w, err)
		return
	}
	mi := n.mapInfo(c)
	writeJSON(w, http.StatusOK, struct {
		MapInfo
		Size int `json:"size"`
	}{mi, size})
}

func (n *Node) httpCluster(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, n.Cluster(r.Context()))
}
