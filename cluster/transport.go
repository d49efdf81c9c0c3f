package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Handler serves one request from another member: from is the caller's
// transport address, method names the request, body is its payload (owned
// by the handler). The returned bytes are the answer; a returned error
// reaches the caller as a *RemoteError carrying its message.
//
// A handler runs in its own goroutine and must respect ctx, which is done
// when the caller's deadline passes or the transport closes.
type Handler func(ctx context.Context, from, method string, body []byte) ([]byte, error)

// Transport carries requests between members: persistent connections,
// one logical stream per call, a deadline on every call.
//
// Delivery: Call delivers a request at most once. A nil error means the
// remote handler ran and returned the answer. An error wrapping
// ErrUnreachable means the request was certainly not handled (the
// connection could not be made or the link is cut). Any other error
// (context deadline, connection lost mid-call) leaves it unknown whether
// the handler ran: callers either make such requests idempotent or treat
// the outcome as unknown.
//
// A Transport is safe for concurrent use. Close stops serving, fails the
// calls in flight, and returns only when every goroutine it started has
// stopped.
type Transport interface {
	// Addr is the address other members call this one at; it is
	// advertised in the member's metadata.
	Addr() string
	// Call sends body to method on the member at addr and waits for the
	// answer, at most until ctx is done. The caller owns the returned
	// bytes.
	Call(ctx context.Context, addr, method string, body []byte) ([]byte, error)
	// SetHandler installs the handler of incoming calls. Calls that
	// arrive before it is installed fail with ErrNoHandler.
	SetHandler(h Handler)
	// Close stops the transport.
	Close() error
}

// Dropper is implemented by transports that keep connections: Drop
// closes the one to addr (a member that failed), failing the calls in
// flight to it at once.
type Dropper interface {
	Drop(addr string)
}

// Errors of the transport.
var (
	// ErrUnreachable: the request was not delivered (no connection, or
	// the link is cut); it is safe to send it again.
	ErrUnreachable = errors.New("stowage/cluster: member unreachable")
	// ErrNoHandler: the member has not installed its handler yet.
	ErrNoHandler = errors.New("stowage/cluster: member is not serving yet")
	// ErrNotMember: the caller is not a member this member accepts
	// calls from (not authenticated as one, or not in its view).
	ErrNotMember = errors.New("stowage/cluster: the caller is not a member")
	// ErrAuthFailed: the member at the address called did not prove it is
	// a member (its certificate is not the cluster's, or names another
	// address). It wraps into ErrUnreachable: nothing was sent.
	ErrAuthFailed = errors.New("stowage/cluster: the member called did not authenticate")
	// ErrTooLarge: a request or answer is over MaxMessageSize.
	ErrTooLarge = errors.New("stowage/cluster: message too large")
)

// MaxMessageSize bounds one request or answer: a whole partition of a
// map travels in one message during migration.
const MaxMessageSize = 1 << 30

// RemoteError is an error returned by the remote handler.
type RemoteError struct {
	Addr    string // the member that answered
	Method  string
	Message string
}

func (e *RemoteError) Error() string {
	return fmt.Sprintf("stowage/cluster: %s at %s: %s", e.Method, e.Addr, e.Message)
}

// Unwrap makes errors.Is(err, ErrNoHandler) true for a member that is
// not serving yet, and errors.Is(err, ErrNotReplica) for one whose table
// does not name the caller as a replica of the partition it called about.
func (e *RemoteError) Unwrap() error {
	switch {
	case e.Message == ErrNoHandler.Error():
		return ErrNoHandler
	case e.Message == ErrNotMember.Error():
		return ErrNotMember
	case strings.HasPrefix(e.Message, ErrNotReplica.Error()+":"):
		return ErrNotReplica
	}
	return nil
}

// IsRemote reports whether err came from the remote handler, in which case
// the request was delivered and handled.
func IsRemote(err error) bool {
	var re *RemoteError
	return errors.As(err, &re)
}

// unreachable wraps a dial or write failure so that it is recognised as
// ErrUnreachable.
func unreachable(addr string, err error) error {
	return fmt.Errorf("%w: %s: %w", ErrUnreachable, addr, err)
}

// callContext is a call's context on the serving side: the transport's
// own context limited by the caller's deadline.
func callContext(parent context.Context, deadlineUnixNano int64) (context.Context, context.CancelFunc) {
	if deadlineUnixNano == 0 {
		return context.WithCancel(parent)
	}
	return context.WithDeadline(parent, timeFromNanos(deadlineUnixNano))
}
