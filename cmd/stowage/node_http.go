package main

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"strconv"

	"github.com/stowage/stowage/config"
	"github.com/stowage/stowage/httpapi"
)

// apiServing is how stowage node serves its HTTP API: where, with which
// TLS configuration (nil: plain HTTP) and which checks.
type apiServing struct {
	addr string
	tls  *tls.Config
	sec  httpapi.Security
}

// apiSecurity decides how the HTTP API is served from
// seatunnel.engine.http and the flags: with enable-https on, over TLS only,
// at httpsAddr or else the host of httpAddr with https-port. An address
// other than loopback must have both TLS and authentication, unless
// insecure is set (then a warning is logged); on a loopback address
// requests must name a loopback host (DNS rebinding).
func apiSecurity(cfg *config.Config, httpAddr, httpsAddr string, insecure bool, log *slog.Logger) (apiServing, error) {
	h := &cfg.Engine.HTTP
	var s apiServing
	var err error
	if s.tls, err = httpapi.TLSConfig(h); err != nil {
		return s, err
	}
	if s.sec, err = httpapi.SecurityFrom(h); err != nil {
		return s, err
	}
	if httpsAddr != "" && s.tls == nil {
		return s, fmt.Errorf("--https %s: seatunnel.engine.http.enable-https is off in seatunnel.yaml", httpsAddr)
	}
	s.addr = httpAddr
	if s.tls != nil {
		s.addr = httpsAddr
		if s.addr == "" {
			host, _, err := net.SplitHostPort(httpAddr)
			if err != nil {
				return s, fmt.Errorf("--http %q: %v", httpAddr, err)
			}
			s.addr = net.JoinHostPort(host, strconv.Itoa(h.HTTPSPort))
		}
	}
	if httpapi.LoopbackAddr(s.addr) {
		s.sec.LoopbackHost = true
		return s, nil
	}
	if s.tls != nil && s.sec.Authenticates() {
		return s, nil
	}
	missing := "TLS and authentication"
	switch {
	case s.tls != nil:
		missing = "authentication"
	case s.sec.Authenticates():
		missing = "TLS"
	}
	if !insecure {
		return s, fmt.Errorf("the HTTP API address %s is not a loopback address and the API has no %s: "+
			"set seatunnel.engine.http enable-https (key-store-path or cert-file and key-file) and enable-basic-auth "+
			"(or bearer-token-file) in seatunnel.yaml, bind --http to 127.0.0.1, or pass --insecure-http to serve it so", s.addr, missing)
	}
	log.Warn("stowage node: the HTTP API is served on an address other than loopback without "+missing+
		" (--insecure-http): anyone who reaches it can read and write every map", "addr", s.addr)
	return s, nil
}
