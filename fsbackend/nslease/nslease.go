package nslease

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stowage/stowage/fsbackend"
)

// LeaseDir is the directory of the lease records below Options.Dir.
const LeaseDir = ".stowage-lease"

// DefaultTTL is how long a record is valid unless renewed.
const DefaultTTL = 15 * time.Second

// keep is how many of the newest records renewal leaves in place.
const keep = 3

// ErrHeld is matched by the *HeldError of Acquire.
var ErrHeld = errors.New("stowage/nslease: namespace is written by another live cluster")

// ErrLost is matched by the error of Lease.Check while this member cannot
// tell that its cluster still holds the lease (Fence).
var ErrLost = errors.New("stowage/nslease: this cluster's namespace lease is not known to be renewed; writes are refused until it is")

// HeldError says who holds the lease Acquire could not take.
type HeldError struct {
	Path    string   // Options.Path
	Members []string // the holder's members, as its record names them
	Renewed time.Time
	Expires time.Time
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("stowage/nslease: %s is written by another live cluster (members %s, lease renewed %s ago): stop that cluster, or give this one another clusterName or namespace",
		e.Path, strings.Join(e.Members, ", "), time.Since(e.Renewed).Round(time.Second))
}

func (e *HeldError) Unwrap() error { return ErrHeld }

// Record is one lease record.
type Record struct {
	Members  []string  `json:"members"`
	Renewed  time.Time `json:"renewed"`
	Expires  time.Time `json:"expires"`
	Released bool      `json:"released,omitempty"`

	// pending: the newest record could not be read yet; Members and the
	// times come from an older record (newest).
	pending bool
}

// Options configure Acquire.
type Options struct {
	// FS and Dir: the namespace/clusterName directory on a back end.
	FS  fsbackend.FS
	Dir string
	// Records is the directory of the records below Dir (LeaseDir when
	// empty): a store whose own names could be LeaseDir keeps them in a
	// directory of a name it never uses.
	Records string
	// Path names the namespace in errors and logs as the user configured
	// it (no back-end absolute path).
	Path string
	// Members returns this cluster's live members' addresses, written
	// into every record.
	Members func() []string
	// Same reports whether the members a record names are this member's
	// own cluster (a full restart of it, or a member joining it).
	Same func(members []string) bool
	// Renew reports whether this member is the one that renews (the
	// master); nil: always.
	Renew func() bool
	// TTL is how long a record stays valid (DefaultTTL when 0).
	TTL    time.Duration
	Logger *slog.Logger
}

// Lease is a held lease; Close stops its renewal. It is safe for
// concurrent use.
type Lease struct {
	o      Options
	mu     sync.Mutex
	last   uint64 // number of the newest record seen
	stop   chan struct{}
	done   chan struct{}
	closed bool
	fence  // what Check answers
}

func (o *Options) ttl() time.Duration {
	if o.TTL > 0 {
		return o.TTL
	}
	return DefaultTTL
}

func (o *Options) dir() string {
	if o.Records != "" {
		return fsbackend.Join(o.Dir, o.Records)
	}
	return fsbackend.Join(o.Dir, LeaseDir)
}

func recordName(dir string, n uint64) string {
	return fsbackend.Join(dir, fmt.Sprintf("%020d", n))
}

// newest returns the number and record of the newest lease record (0 when
// there is none). A record whose bytes cannot be read yet (a local or
// HDFS file still being written: it is listed before it is closed) keeps
// its number, but its holder is read from the newest older record, and it
// counts as live until its modification time is a TTL old; with no
// readable record at all its holder is "unknown".
func (o *Options) newest(ctx context.Context) (uint64, Record, error) {
	for try := 0; try < 5; try++ {
		n, r, vanished, err := o.newestOnce(ctx)
		if err != nil || !vanished {
			return n, r, err
		}
		// Every record listed was removed before it was read (renewals
		// pruned them meanwhile): list again rather than take the
		// directory for empty.
	}
	return 0, Record{}, fmt.Errorf("stowage/nslease: the lease records of %s change faster than they can be read", o.Path)
}

// newestOnce is one listing of newest; vanished reports that records were
// listed but every one was gone when read.
func (o *Options) newestOnce(ctx context.Context) (uint64, Record, bool, error) {
	list, err := o.FS.List(ctx, o.dir())
	if err != nil {
		return 0, Record{}, false, err
	}
	gone := false
	var top uint64
	var pending time.Time // modification time of an unreadable newer record
	for i := len(list) - 1; i >= 0; i-- {
		n, err := strconv.ParseUint(path.Base(list[i].Name), 10, 64)
		if err != nil {
			continue
		}
		var r Record
		b, err := fsbackend.ReadFile(ctx, o.FS, list[i].Name)
		if errors.Is(err, fs.ErrNotExist) {
			gone = true
			continue // removed as superseded while we listed
		}
		if err != nil || json.Unmarshal(b, &r) != nil || r.Expires.IsZero() {
			if top == 0 {
				top, pending = n, list[i].ModTime
			}
			continue
		}
		if top == 0 {
			return n, r, false, nil
		}
		r.Released, r.pending = false, true
		if exp := pending.Add(o.ttl()); exp.After(r.Expires) {
			r.Renewed, r.Expires = pending, exp
		}
		return top, r, false, nil
	}
	if top == 0 {
		return 0, Record{}, gone, nil
	}
	return top, Record{pending: true, Members: []string{"unknown"}, Renewed: pending, Expires: pending.Add(o.ttl())}, false, nil
}

// create makes record n; fs.ErrExist when another writer made it first.
func (o *Options) create(ctx context.Context, n uint64, released bool) error {
	now := time.Now()
	r := Record{Members: o.Members(), Renewed: now, Expires: now.Add(o.ttl()), Released: released}
	if released {
		r.Expires = now
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return fsbackend.WriteFile(ctx, o.FS, recordName(o.dir(), n), b)
}

// Acquire takes the lease of o.Dir, or fails with an *HeldError when
// another live cluster holds it. It may wait up to one TTL to tell a live
// holder from one that is gone.
func Acquire(ctx context.Context, o Options) (*Lease, error) {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	var watched uint64      // another cluster's record being watched
	var watchedAt time.Time // monotonic: when this member first saw it
	for {
		start := time.Now()
		n, r, err := o.newest(ctx)
		if err != nil {
			return nil, fmt.Errorf("stowage/nslease: read the lease of %s: %w", o.Path, err)
		}
		now := time.Now()
		// Another cluster's record is free once it expired by its own
		// wall clock and this member watched it stay the newest for a
		// full TTL on its monotonic clock: the holder's members stop
		// writing within fenceAfter of the record's creation (fence.go),
		// whatever the two hosts' wall clocks say.
		free := n == 0 || r.Released || o.Same(r.Members) ||
			(!now.Before(r.Expires) && watched == n && now.Sub(watchedAt) >= o.ttl())
		if !free {
			if watched != 0 && n != watched {
				return nil, &HeldError{Path: o.Path, Members: r.Members, Renewed: r.Renewed, Expires: r.Expires}
			}
			if watched == 0 {
				watched, watchedAt = n, now
			}
			wait := min(max(r.Expires.Sub(now), o.ttl()-now.Sub(watchedAt))+10*time.Millisecond, o.ttl()/10)
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(wait):
			}
			continue
		}
		if err := o.create(ctx, n+1, false); err != nil {
			if errors.Is(err, fs.ErrExist) {
				continue // another writer made n+1: read it
			}
			return nil, fmt.Errorf("stowage/nslease: take the lease of %s: %w", o.Path, err)
		}
		if n > 0 && !r.Released && !o.Same(r.Members) {
			o.Logger.Warn("stowage: took over the namespace lease of a cluster that stopped renewing it", "namespace", o.Path, "members", r.Members)
		}
		l := &Lease{o: o, last: n + 1, stop: make(chan struct{}), done: make(chan struct{})}
		l.fence.done = make(chan struct{})
		l.fence.renewed(n+1, start) // record n+1 was created after start
		go l.follow()
		l.prune(ctx)
		go l.loop()
		return l, nil
	}
}

// loop renews the lease every renewEvery while this member is the
// renewer.
func (l *Lease) loop() {
	defer close(l.done)
	t := time.NewTicker(renewEvery(l.o.ttl()))
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		if l.o.Renew != nil && !l.o.Renew() {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), renewEvery(l.o.ttl()))
		// Another cluster's record is logged once by the fence.
		if err := l.Renew(ctx); err != nil && !errors.Is(err, ErrHeld) {
			l.o.Logger.Error("stowage: could not renew the namespace lease", "namespace", l.o.Path, "err", err)
		}
		cancel()
	}
}

// Renew writes the next record if the newest is this cluster's; it fails
// with an *HeldError when another cluster took the lease over.
func (l *Lease) Renew(ctx context.Context) error {
	return l.write(ctx, false)
}

func (l *Lease) write(ctx context.Context, released bool) error {
	for try := 0; try < 5; try++ {
		start := time.Now()
		n, r, err := l.o.newest(ctx)
		if err != nil {
			return err
		}
		if n > 0 && !r.Released && !l.o.Same(r.Members) {
			l.fence.otherCluster(l.o, n, r)
			return &HeldError{Path: l.o.Path, Members: r.Members, Renewed: r.Renewed, Expires: r.Expires}
		}
		err = l.o.create(ctx, n+1, released)
		if errors.Is(err, fs.ErrExist) {
			continue // another member of this cluster renewed at once
		}
		if err != nil {
			return err
		}
		l.mu.Lock()
		l.last = n + 1
		l.mu.Unlock()
		if !released {
			l.fence.renewed(n+1, start)
		}
		l.prune(ctx)
		return nil
	}
	return fmt.Errorf("stowage/nslease: renew the lease of %s: lost every race", l.o.Path)
}

// prune removes records older than the newest keep (best effort).
func (l *Lease) prune(ctx context.Context) {
	l.mu.Lock()
	last := l.last
	l.mu.Unlock()
	list, err := l.o.FS.List(ctx, l.o.dir())
	if err != nil {
		return
	}
	for _, fi := range list {
		if n, err := strconv.ParseUint(path.Base(fi.Name), 10, 64); err == nil && n+keep <= last {
			_ = l.o.FS.Remove(ctx, fi.Name)
		}
	}
}

// Close stops the renewal; with release, it writes a released record so
// that another cluster may take the namespace at once (the last member of
// a cluster stopping). It does not close the FS.
func (l *Lease) Close(ctx context.Context, release bool) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.mu.Unlock()
	close(l.stop)
	<-l.done
	<-l.fence.done
	if release {
		return l.write(ctx, true)
	}
	return nil
}
