package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/yamux"
)

// TCPOptions configures a TCPTransport. Zero values take the defaults
// listed on each field. ListenTCP copies the options; changing them
// afterwards has no effect.
type TCPOptions struct {
	// Logger receives the transport's and yamux's log lines; nil
	// discards them.
	Logger *slog.Logger
	// DialTimeout bounds connecting to another member (the call's
	// context may end it sooner); default 5 s.
	DialTimeout time.Duration
	// KeepAliveInterval is how often an idle connection is pinged; a ping
	// unanswered within ConnectionWriteTimeout closes the connection, so
	// a dead peer is found within about their sum. Default 30 s.
	KeepAliveInterval time.Duration
	// ConnectionWriteTimeout bounds one write on a connection and the
	// wait for a keep-alive answer; a connection that stalls longer is
	// closed. Default 10 s.
	ConnectionWriteTimeout time.Duration
	// StreamWindow is the flow-control window of one call, in bytes: how
	// much of a request or answer may be in flight before the reader
	// takes it. Larger windows move big messages faster over links with a
	// long round trip, at the cost of that much buffer per call in
	// flight. Default 1 MiB; at least 256 KiB.
	StreamWindow int
	// Advertise is the address returned by Addr and sent to the members
	// this one calls; default the address actually listened on. Set it
	// when listening on a wildcard address such as ":5802".
	Advertise string
	// Security, when enabled, makes every connection TLS 1.3 with
	// certificates on both ends (see Security); a handler's from is then
	// the authenticated peer's address, never the one the frame states.
	Security *Security
	// HandshakeTimeout bounds the TLS handshake of a connection, either
	// way; default 10 s.
	HandshakeTimeout time.Duration
	// MaxHandshakes caps the incoming connections not yet authenticated;
	// more are closed at once. Default 64.
	MaxHandshakes int
	// MaxStreams caps the calls one incoming connection has served at
	// once; further ones wait. Default 512.
	MaxStreams int
	// MaxConnections caps the incoming connections (sessions and direct
	// pipes) served at once, so that a peer that opens connection after
	// connection, each with MaxStreams calls, cannot take the member's
	// memory; more are closed at once. A member keeps one session and one
	// direct pipe at a time to each member it calls. Default 1024.
	MaxConnections int

	// maxMessage lowers MaxMessageSize; tests set it so that they need
	// not allocate a whole MaxMessageSize message.
	maxMessage int
}

const minStreamWindow = 256 << 10 // yamux's initial window

func (o TCPOptions) withDefaults() TCPOptions {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.DialTimeout == 0 {
		o.DialTimeout = 5 * time.Second
	}
	if o.KeepAliveInterval == 0 {
		o.KeepAliveInterval = 30 * time.Second
	}
	if o.ConnectionWriteTimeout == 0 {
		o.ConnectionWriteTimeout = 10 * time.Second
	}
	if o.StreamWindow == 0 {
		o.StreamWindow = 1 << 20
	}
	if o.HandshakeTimeout == 0 {
		o.HandshakeTimeout = 10 * time.Second
	}
	if o.MaxHandshakes == 0 {
		o.MaxHandshakes = 64
	}
	if o.MaxStreams == 0 {
		o.MaxStreams = 512
	}
	if o.MaxConnections == 0 {
		o.MaxConnections = 1024
	}
	if o.maxMessage == 0 {
		o.maxMessage = MaxMessageSize
	}
	return o
}

func (o TCPOptions) validate() error {
	var errs []error
	if o.DialTimeout < 0 {
		errs = append(errs, fmt.Errorf("stowage/cluster: dial timeout %v is negative", o.DialTimeout))
	}
	if o.KeepAliveInterval < 0 {
		errs = append(errs, fmt.Errorf("stowage/cluster: keep-alive interval %v is negative", o.KeepAliveInterval))
	}
	if o.ConnectionWriteTimeout < 0 {
		errs = append(errs, fmt.Errorf("stowage/cluster: connection write timeout %v is negative", o.ConnectionWriteTimeout))
	}
	if o.StreamWindow < minStreamWindow || o.StreamWindow > 1<<30 {
		errs = append(errs, fmt.Errorf("stowage/cluster: stream window %d out of range [%d, %d]", o.StreamWindow, minStreamWindow, 1<<30))
	}
	if o.HandshakeTimeout < 0 || o.MaxHandshakes < 0 || o.MaxStreams < 0 || o.MaxConnections < 0 {
		errs = append(errs, errors.New("stowage/cluster: handshake timeout, handshake cap, stream cap and connection cap must not be negative"))
	}
	if err := o.Security.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// TCPTransport is the Transport between members over TCP. It keeps one
// connection to each member it calls, dialled on the first call and again
// when broken, and multiplexes calls over it with yamux: a Call is a
// stream of its own, while the calls of CallAsync share one stream, the
// pipe, by request id (tcp_pipe_frame.go), so that calls made at once go
// in one write; members it is called by connect to it the same way.
// Keep-alive pings find a dead peer on an idle connection.
//
// Every handler runs in its own goroutine under a context that ends with
// the caller's deadline, when the caller gives up (its context ends or
// its connection breaks), or when the transport closes.
//
// A TCPTransport is safe for concurrent use.
type TCPTransport struct {
	opts TCPOptions
	ln   net.Listener
	addr string
	ymx  *yamux.Config
	log  *slog.Logger
	// refusedBusy and refusedPeer log connections refused past the
	// transport's limits, and those that fail to authenticate or break
	// the protocol (see refusalLog).
	refusedBusy, refusedPeer *refusalLog
	ctx                      context.Context // ends with Close
	cancel                   context.CancelFunc

	handler atomic.Pointer[Handler]
	tls     *tlsState     // nil without Security
	hsSlots chan struct{} // a token per handshake in progress
	// directOff: pipes run on session streams, and a direct pipe's
	// preamble is taken for a session (a member without direct pipes;
	// set by tests before the first call).
	directOff bool
	count     tcpCounters
	tasks     chan *servedTask // handlers for an idle worker (runTask)
	idle      atomic.Int32     // workers waiting on tasks

	mu      sync.Mutex
	closed  bool
	peers   map[string]*peer       // outgoing connections, by address
	inbound map[io.Closer]struct{} // incoming connections: sessions and direct pipes
	wg      sync.WaitGroup         // every goroutine started here
}

var _ Transport = (*TCPTransport)(nil)

// ListenTCP listens on addr ("host:port"; port 0 picks a free one) and
// returns the transport serving there. Close releases it.
func ListenTCP(addr string, opts TCPOptions) (*TCPTransport, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	var ts *tlsState
	if opts.Security.Enabled() {
		var err error
		if ts, err = newTLSState(opts.Security); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("stowage/cluster: listen: %w", err)
	}
	ymx := yamux.DefaultConfig()
	ymx.LogOutput = nil
	ymx.Logger = yamuxLogger{opts.Logger}
	ymx.EnableKeepAlive = true
	ymx.KeepAliveInterval = opts.KeepAliveInterval
	ymx.ConnectionWriteTimeout = opts.ConnectionWriteTimeout
	ymx.MaxStreamWindowSize = uint32(opts.StreamWindow)
	if err := yamux.VerifyConfig(ymx); err != nil {
		ln.Close()
		return nil, fmt.Errorf("stowage/cluster: yamux: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t := &TCPTransport{
		opts:    opts,
		ln:      ln,
		addr:    opts.Advertise,
		ymx:     ymx,
		log:     opts.Logger.With("component", "transport"),
		ctx:     ctx,
		cancel:  cancel,
		peers:   map[string]*peer{},
		inbound: map[io.Closer]struct{}{},
		tls:     ts,
		hsSlots: make(chan struct{}, opts.MaxHandshakes),
		tasks:   make(chan *servedTask),
	}
	t.refusedBusy, t.refusedPeer = newRefusalLog(t.log), newRefusalLog(t.log)
	if t.addr == "" {
		t.addr = ln.Addr().String()
	}
	if ts != nil {
		ts.addr = t.addr
		if _, err := ts.certificate(); err != nil {
			ln.Close()
			cancel()
			return nil, err
		}
	}
	t.wg.Add(1)
	go t.acceptLoop()
	return t, nil
}

// Addr implements Transport: the address listened on, or
// TCPOptions.Advertise.
func (t *TCPTransport) Addr() string { return t.addr }

// Secure reports whether the transport authenticates its peers: a
// handler's from is then the authenticated caller.
func (t *TCPTransport) Secure() bool { return t.tls != nil }

// SetHandler implements Transport.
func (t *TCPTransport) SetHandler(h Handler) {
	if h == nil {
		t.handler.Store(nil)
		return
	}
	t.handler.Store(&h)
}

// Close implements Transport: it stops listening, closes every connection
// (calls in flight in either direction fail), ends the handlers' contexts
// and returns once every goroutine the transport started has stopped,
// handlers included. Calls made after Close fail with ErrUnreachable.
func (t *TCPTransport) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	var sessions []io.Closer
	for _, p := range t.peers {
		if s := p.sess.Load(); s != nil {
			sessions = append(sessions, s)
		}
	}
	for s := range t.inbound {
		sessions = append(sessions, s)
	}
	t.mu.Unlock()

	t.cancel()
	err := t.ln.Close()
	for _, s := range sessions {
		s.Close()
	}
	t.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}
