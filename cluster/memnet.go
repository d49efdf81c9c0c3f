package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"
)

// MemNetwork is an in-memory network of transports, the twin of the TCP
// transport for deterministic tests: links between two addresses can be
// cut and healed, in one direction or both, and every call can be seen by
// a hook. It is safe for concurrent use.
type MemNetwork struct {
	mu    sync.Mutex
	nodes map[string]*MemTransport
	cut   map[[2]string]bool // from, to
	hook  func(from, to, method string) error
	meter func(from, to, method string, request, answer int)
	// frozen addresses: calls to or from them wait, as with a process
	// that stopped (SIGSTOP) or a host that hangs, until the channel is
	// closed by Thaw or the caller gives up.
	frozen map[string]chan struct{}
}

// NewMemNetwork returns an empty network.
func NewMemNetwork() *MemNetwork {
	return &MemNetwork{nodes: map[string]*MemTransport{}, cut: map[[2]string]bool{}, frozen: map[string]chan struct{}{}}
}

// Transport returns a new transport at addr. Adding an address that is
// already on the network replaces it (a restarted member).
func (n *MemNetwork) Transport(addr string) *MemTransport {
	ctx, cancel := context.WithCancel(context.Background())
	t := &MemTransport{net: n, addr: addr, ctx: ctx, cancel: cancel}
	n.mu.Lock()
	n.nodes[addr] = t
	n.mu.Unlock()
	return t
}

// Cut stops calls from a to b (one direction). Calls in flight are not
// affected; their answers still arrive.
func (n *MemNetwork) Cut(a, b string) {
	n.mu.Lock()
	n.cut[[2]string{a, b}] = true
	n.mu.Unlock()
}

// CutBoth cuts the link between a and b in both directions.
func (n *MemNetwork) CutBoth(a, b string) {
	n.Cut(a, b)
	n.Cut(b, a)
}

// Isolate cuts every link of addr with every other address on the network.
func (n *MemNetwork) Isolate(addr string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for other := range n.nodes {
		if other != addr {
			n.cut[[2]string{addr, other}] = true
			n.cut[[2]string{other, addr}] = true
		}
	}
}

// Heal restores the link between a and b in both directions.
func (n *MemNetwork) Heal(a, b string) {
	n.mu.Lock()
	delete(n.cut, [2]string{a, b})
	delete(n.cut, [2]string{b, a})
	n.mu.Unlock()
}

// HealAll restores every link.
func (n *MemNetwork) HealAll() {
	n.mu.Lock()
	clear(n.cut)
	n.mu.Unlock()
}

// Freeze makes addr hang: calls to it and from it neither fail nor
// answer; they wait until Thaw, or until their caller gives up (its
// context ends). Unlike a cut link or a closed transport, nothing is
// refused, as when a member's process is stopped or its host hangs.
func (n *MemNetwork) Freeze(addr string) {
	n.mu.Lock()
	if n.frozen[addr] == nil {
		n.frozen[addr] = make(chan struct{})
	}
	n.mu.Unlock()
}

// Thaw lets addr run again: calls waiting on it go ahead.
func (n *MemNetwork) Thaw(addr string) {
	n.mu.Lock()
	if ch := n.frozen[addr]; ch != nil {
		close(ch)
		delete(n.frozen, addr)
	}
	n.mu.Unlock()
}

// hung returns a channel closed once neither a nor b is frozen, or nil
// if neither is.
func (n *MemNetwork) hung(a, b string) <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	if ch := n.frozen[a]; ch != nil {
		return ch
	}
	return n.frozen[b]
}

// SetHook installs a function that sees every call before it is
// delivered; a non-nil error fails the call with ErrUnreachable (the
// request is not delivered). nil removes the hook.
func (n *MemNetwork) SetHook(h func(from, to, method string) error) {
	n.mu.Lock()
	n.hook = h
	n.mu.Unlock()
}

// SetMeter installs m, which is told of every call answered: its
// request's and its answer's size in bytes. nil removes it.
func (n *MemNetwork) SetMeter(m func(from, to, method string, request, answer int)) {
	n.mu.Lock()
	n.meter = m
	n.mu.Unlock()
}

func (n *MemNetwork) route(from, to, method string) (*MemTransport, error) {
	n.mu.Lock()
	dst := n.nodes[to]
	cut := n.cut[[2]string{from, to}]
	hook := n.hook
	n.mu.Unlock()
	if cut {
		return nil, unreachable(to, errors.New("link cut"))
	}
	if dst == nil {
		// Nothing listens there, as after a process died.
		return nil, unreachable(to, fmt.Errorf("no such address: %w", syscall.ECONNREFUSED))
	}
	if hook != nil {
		if err := hook(from, to, method); err != nil {
			return nil, unreachable(to, err)
		}
	}
	return dst, nil
}

// MemTransport is one member's transport on a MemNetwork.
type MemTransport struct {
	net    *MemNetwork
	addr   string
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	handler Handler
	closed  bool
	wg      sync.WaitGroup
}

var _ Transport = (*MemTransport)(nil)

// Addr implements Transport.
func (t *MemTransport) Addr() string { return t.addr }

// SetHandler implements Transport.
func (t *MemTransport) SetHandler(h Handler) {
	t.mu.Lock()
	t.handler = h
	t.mu.Unlock()
}

// Call implements Transport: the handler runs in its own goroutine on a
// copy of body, under a context that ends with the caller's deadline or
// with either transport's Close.
func (t *MemTransport) Call(ctx context.Context, addr, method string, body []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t.mu.Lock()
	closed := t.closed
	t.mu.Unlock()
	if closed {
		return nil, unreachable(addr, errors.New("transport closed"))
	}
	if len(body) > MaxMessageSize {
		return nil, ErrTooLarge
	}
	for {
		thaw := t.net.hung(t.addr, addr)
		if thaw == nil {
			break
		}
		select {
		case <-thaw:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.ctx.Done():
			return nil, errors.New("stowage/cluster: transport closed during call")
		}
	}
	dst, err := t.net.route(t.addr, addr, method)
	if err != nil {
		return nil, err
	}
	dst.mu.Lock()
	h, dclosed := dst.handler, dst.closed
	if !dclosed {
		dst.wg.Add(1)
	}
	dst.mu.Unlock()
	if dclosed {
		return nil, unreachable(addr, fmt.Errorf("member closed: %w", syscall.ECONNREFUSED))
	}
	if h == nil {
		dst.wg.Done()
		return nil, &RemoteError{Addr: addr, Method: method, Message: ErrNoHandler.Error()}
	}
	var dl int64
	if d, ok := ctx.Deadline(); ok {
		dl = d.UnixNano()
	}
	type answer struct {
		b   []byte
		err error
	}
	ch := make(chan answer, 1)
	in := append([]byte(nil), body...)
	go func() {
		defer dst.wg.Done()
		hctx, cancel := callContext(dst.ctx, dl)
		defer cancel()
		b, err := h(hctx, t.addr, method, in)
		ch <- answer{append([]byte(nil), b...), err}
	}()
	select {
	case a := <-ch:
		t.net.mu.Lock()
		meter := t.net.meter
		t.net.mu.Unlock()
		if meter != nil {
			meter(t.addr, addr, method, len(body), len(a.b))
		}
		if a.err != nil {
			return nil, &RemoteError{Addr: addr, Method: method, Message: a.err.Error()}
		}
		return a.b, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.ctx.Done():
		return nil, errors.New("stowage/cluster: transport closed during call")
	}
}

// Close implements Transport: incoming calls are refused, handlers in
// flight see their context end, and Close waits for them.
func (t *MemTransport) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	t.mu.Unlock()
	t.cancel()
	t.wg.Wait()
	t.net.mu.Lock()
	if t.net.nodes[t.addr] == t {
		delete(t.net.nodes, t.addr)
	}
	t.net.mu.Unlock()
	return nil
}

func timeFromNanos(n int64) time.Time { return time.Unix(0, n) }
