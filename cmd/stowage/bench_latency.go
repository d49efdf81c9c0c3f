package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/internal/latency"
)

// endpointKeys are the properties that name an object store's endpoint.
var endpointKeys = []string{"fs.s3a.endpoint", "fs.oss.endpoint", "fs.cosn.endpoint"}

// latencyProxy puts a proxy on 127.0.0.1 in front of the object store
// that props name by endpoint, which delays every request by d (the
// latency model of the test servers: a real object store answers in tens
// of milliseconds), and points props at it. It returns the model, which
// counts requests in flight by kind, and a function that stops the proxy.
func latencyProxy(props fsbackend.Properties, d time.Duration) (*latency.Model, func(), error) {
	key := ""
	for _, k := range endpointKeys {
		if props[k] != "" {
			key = k
			break
		}
	}
	if key == "" {
		return nil, nil, fmt.Errorf("--fs-latency needs an object store whose endpoint is given (--property %s=http://host:port)", strings.Join(endpointKeys, "|"))
	}
	target, err := url.Parse(props[key])
	if err != nil || (target.Scheme != "http" && target.Scheme != "https") || target.Host == "" {
		return nil, nil, fmt.Errorf("--fs-latency: property %s %q is not an http(s) URL", key, props[key])
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	m := latency.New(d)
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		// The client signed the Host it sent: keep it.
		r.Out.Host = r.In.Host
	}}
	srv := &http.Server{Handler: m.Handler(proxy), ReadHeaderTimeout: time.Minute}
	go func() { _ = srv.Serve(ln) }()
	props[key] = "http://" + ln.Addr().String()
	return m, func() { _ = srv.Close() }, nil
}
