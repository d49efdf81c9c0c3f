package hdfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	pathpkg "path"
	"sort"
	"sync"
	"time"

	gohdfs "github.com/colinmarc/hdfs/v2"

	"github.com/stowage/stowage/fsbackend"
)

// Options are programmatic settings that have no property key.
type Options struct {
	// DialNameNode and DialDataNode replace the dialers (for proxies or
	// tests). An FS with either set gets a private client.
	DialNameNode func(ctx context.Context, network, addr string) (net.Conn, error)
	DialDataNode func(ctx context.Context, network, addr string) (net.Conn, error)
	// Logger receives debug records of retries and rebuilt clients;
	// nil means slog.Default().
	Logger *slog.Logger
}

// FS is an HDFS cluster used as an fsbackend.FS, rooted at the cluster's
// "/". It is safe for concurrent use.
type FS struct {
	cfg   *Config
	opts  Options
	cache *clientCache
	log   *slog.Logger

	mu     sync.Mutex
	cur    *client // the FS's own reference
	closed bool
}

var _ fsbackend.FS = (*FS)(nil)

func init() {
	fsbackend.Register("hdfs", func(ctx context.Context, p fsbackend.Properties) (fsbackend.FS, error) {
		return Open(ctx, p)
	})
}

// Open parses properties (see the package doc), connects to the NameNode
// and returns the FS.
func Open(ctx context.Context, p fsbackend.Properties) (*FS, error) {
	return OpenWithOptions(ctx, p, Options{})
}

// OpenWithOptions is Open with programmatic options.
func OpenWithOptions(ctx context.Context, p fsbackend.Properties, opts Options) (*FS, error) {
	cfg, err := ParseProperties(p)
	if err != nil {
		return nil, err
	}
	return OpenConfig(ctx, cfg, opts)
}

// OpenConfig returns an FS for a parsed Config.
func OpenConfig(ctx context.Context, cfg *Config, opts Options) (*FS, error) {
	f := &FS{cfg: cfg, opts: opts, cache: sharedClients, log: opts.Logger}
	if f.log == nil {
		f.log = slog.Default()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var err error
	for attempt := 0; ; attempt++ {
		f.cur, err = f.acquire()
		if err == nil || !unreachable(err) || attempt >= f.cfg.FailoverAttempts {
			break
		}
		if werr := f.backoff(ctx, attempt); werr != nil {
			return nil, err
		}
	}
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Config returns the FS's configuration. The result must not be modified.
func (f *FS) Config() *Config { return f.cfg }

func (f *FS) acquire() (*client, error) {
	private := f.cfg.DisableCache || f.opts.DialNameNode != nil || f.opts.DialDataNode != nil
	c, err := f.cache.acquire(f.cfg.cacheKey(), private, f.build)
	if errors.Is(err, ErrKerberos) {
		return nil, err
	}
	if err != nil {
		return nil, classify("connect", f.cfg.URI, err)
	}
	return c, nil
}

// ClientOptions returns the options the Go client is built with, for
// inspection. Kerberos is not logged in here: KerberosClient is nil.
func (cfg *Config) ClientOptions() gohdfs.ClientOptions {
	co := gohdfs.ClientOptionsFromConf(cfg.hadoopConf())
	co.Addresses = append([]string(nil), cfg.Addresses...)
	co.User = cfg.User
	co.UseDatanodeHostname = cfg.UseDatanodeHostname
	co.KerberosClient = nil
	co.KerberosServicePrincipleName = ""
	if cfg.Kerberos != nil {
		co.KerberosServicePrincipleName = cfg.Kerberos.ServicePrincipal
	}
	return co
}

// build makes a Go HDFS client; with Kerberos it logs in first, and the
// returned func ends that login after the client is closed.
func (f *FS) build() (*gohdfs.Client, func(), error) {
	co := f.cfg.ClientOptions()
	nnDial := f.opts.DialNameNode
	if nnDial == nil {
		nnDial = (&net.Dialer{Timeout: f.cfg.DialTimeout}).DialContext
	}
	co.NamenodeDialFunc = timeoutDial(nnDial, f.cfg.NameNodeTimeout)
	dnDial := f.opts.DialDataNode
	if dnDial == nil {
		dnDial = (&net.Dialer{Timeout: f.cfg.DialTimeout}).DialContext
	}
	co.DatanodeDialFunc = dnDial
	if f.cfg.Kerberos != nil {
		kc, err := f.cfg.Kerberos.kerberosClient()
		if err != nil {
			return nil, nil, err
		}
		co.KerberosClient = kc
	}
	c, err := gohdfs.NewClient(co)
	if err != nil {
		if co.KerberosClient != nil {
			co.KerberosClient.Destroy()
		}
		return nil, nil, fmt.Errorf("connect to %v as %s: %w", co.Addresses, f.cfg.identity(), err)
	}
	var logout func()
	if co.KerberosClient != nil {
		logout = co.KerberosClient.Destroy
	}
	// The client caches the server defaults on first use without a lock:
	// fetch them now, before the client is shared, so concurrent Creates
	// only read them.
	if _, err := c.ServerDefaults(); err != nil {
		c.Close()
		if logout != nil {
			logout()
		}
		return nil, nil, fmt.Errorf("connect to %v as %s: server defaults: %w", co.Addresses, f.cfg.identity(), err)
	}
	return c, logout, nil
}

func (c *Config) identity() string {
	if c.Kerberos != nil {
		return c.Kerberos.Principal
	}
	return c.User
}

// timeoutDial wraps a dialer so that every read and write on the
// connection must finish within d (0: no limit).
func timeoutDial(dial func(ctx context.Context, network, addr string) (net.Conn, error), d time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if d <= 0 {
		return dial
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &deadlineConn{Conn: c, d: d}, nil
	}
}

type deadlineConn struct {
	net.Conn
	d time.Duration
}

func (c *deadlineConn) Read(p []byte) (int, error) {
	_ = c.Conn.SetReadDeadline(time.Now().Add(c.d))
	return c.Conn.Read(p)
}

func (c *deadlineConn) Write(p []byte) (int, error) {
	_ = c.Conn.SetWriteDeadline(time.Now().Add(c.d))
	return c.Conn.Write(p)
}

// current returns the FS's client, replacing it first if it broke.
func (f *FS) current() (*client, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, fsbackend.ErrClosed
	}
	if f.cur != nil && !f.cache.isBroken(f.cur) {
		return f.cur, nil
	}
	if f.cur != nil {
		f.log.Debug("stowage/fsbackend/hdfs: rebuilding client after connection error", "fs", f.cfg.String())
		f.cache.release(f.cur)
		f.cur = nil
	}
	c, err := f.acquire()
	if err != nil {
		return nil, err
	}
	f.cur = c
	return c, nil
}

func (f *FS) backoff(ctx context.Context, attempt int) error {
	d := f.cfg.FailoverSleepBase << min(attempt, 16)
	if d > f.cfg.FailoverSleepMax || d <= 0 {
		d = f.cfg.FailoverSleepMax
	}
	return sleep(ctx, d)
}

// sleep waits d, or until ctx is done, whose error it then returns.
func sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// do runs fn on the current client, retrying (on a fresh client) while no
// NameNode is reachable, and retrying when the NameNode answers
// RetriableException, within ctx and dfs.client.failover.max.attempts.
func (f *FS) do(ctx context.Context, op, p string, fn func(c *client) error) error {
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return &fs.PathError{Op: op, Path: p, Err: err}
		}
		c, err := f.current()
		if err != nil && !errors.As(err, new(*fs.PathError)) {
			err = &fs.PathError{Op: op, Path: p, Err: err}
		}
		if err == nil {
			err = classify(op, p, fn(c))
			if err != nil && unreachable(err) {
				f.cache.markBroken(c)
			}
		}
		if err == nil || !retriable(err) || attempt >= f.cfg.FailoverAttempts {
			return err
		}
		f.log.Debug("stowage/fsbackend/hdfs: retrying", "op", op, "path", p, "attempt", attempt+1, "err", err)
		if werr := f.backoff(ctx, attempt); werr != nil {
			return err
		}
	}
}

func hpath(name string) string { return "/" + name }

// Capabilities implements fsbackend.FS.
func (f *FS) Capabilities() fsbackend.Capabilities {
	// A recursive delete is one NameNode transaction: the directory's
	// tree leaves the namespace at once, its blocks are freed after.
	return fsbackend.Capabilities{DurableAppend: false, SyncOpen: true, AtomicRename: true, ConditionalCreate: true, AtomicRemoveAll: true}
}

// Create implements fsbackend.FS: missing parents are made first, and the
// create is exclusive at the NameNode.
func (f *FS) Create(ctx context.Context, name string) (fsbackend.Writer, error) {
	if err := fsbackend.ValidName(name); err != nil {
		return nil, err
	}
	p := hpath(name)
	var w *writer
	err := f.do(ctx, "create", p, func(c *client) error {
		sd, err := c.c.ServerDefaults() // fetched by build: no NameNode call
		if err != nil {
			return err
		}
		for try := 0; ; try++ {
			if err := c.c.MkdirAll(pathpkg.Dir(p), fsbackend.DirMode(f.cfg.Umask)); err != nil {
				return err
			}
			// CreateFile without overwrite: the NameNode refuses an
			// existing name (FileAlreadyExistsException, os.ErrExist).
			fw, err := c.c.CreateFile(p, sd.Replication, sd.BlockSize, fsbackend.FileMode(f.cfg.Umask))
			if errors.Is(err, os.ErrNotExist) && try < 3 {
				continue // a concurrent Remove pruned the parent
			}
			if err != nil {
				return err
			}
			fw.SetSyncBlock(f.cfg.SyncOnClose)
			f.cache.ref(c)
			w = &writer{f: f, c: c, fw: fw, path: p, ctx: ctx, failedAt: -1,
				keep: keeper{limit: keepLimit(sd.BlockSize, f.cfg.CloseRetries)},
				reopen: func() (blockFile, error) {
					return replaceFile(c.c, p, f.cfg.SyncOnClose, fsbackend.FileMode(f.cfg.Umask))
				}}
			return nil
		}
	})
	if err != nil {
		return nil, err
	}
	return w, nil
}

// Open implements fsbackend.FS.
func (f *FS) Open(ctx context.Context, name string) (fsbackend.Reader, error) {
	if err := fsbackend.ValidName(name); err != nil {
		return nil, err
	}
	p := hpath(name)
	var r *reader
	err := f.do(ctx, "open", p, func(c *client) error {
		// One NameNode call: the block locations, which the first read
		// needs anyway, say the file's length and whether it is under
		// construction (such a file is opened with its status too).
		fr, err := c.c.OpenFile(p)
		if err != nil {
			return err
		}
		st := fr.Stat()
		if st.IsDir() {
			fr.Close()
			return fs.ErrNotExist
		}
		open, err := fr.UnderConstruction()
		if err != nil {
			fr.Close()
			return err
		}
		f.cache.ref(c)
		r = &reader{f: f, c: c, fr: fr, size: st.Size(), path: p, open: open}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Stat implements fsbackend.FS.
func (f *FS) Stat(ctx context.Context, name string) (fsbackend.FileInfo, error) {
	if err := fsbackend.ValidName(name); err != nil {
		return fsbackend.FileInfo{}, err
	}
	p := hpath(name)
	var fi fsbackend.FileInfo
	err := f.do(ctx, "stat", p, func(c *client) error {
		st, err := c.c.Stat(p)
		if err != nil {
			return err
		}
		if st.IsDir() {
			return fs.ErrNotExist
		}
		fi = fsbackend.FileInfo{Name: name, Size: st.Size(), ModTime: st.ModTime()}
		return nil
	})
	return fi, err
}

// List implements fsbackend.FS.
func (f *FS) List(ctx context.Context, dir string) ([]fsbackend.FileInfo, error) {
	if err := fsbackend.ValidDir(dir); err != nil {
		return nil, err
	}
	root := "/" + dir
	var out []fsbackend.FileInfo
	err := f.do(ctx, "list", root, func(c *client) error {
		out = out[:0]
		return f.walk(ctx, c.c, root, &out, true)
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (f *FS) walk(ctx context.Context, c *gohdfs.Client, dir string, out *[]fsbackend.FileInfo, top bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if top {
		st, err := c.Stat(dir)
		if errors.Is(err, os.ErrNotExist) || (err == nil && !st.IsDir()) {
			return nil // a missing dir, or a file, has nothing below it
		}
		if err != nil {
			return err
		}
	}
	entries, err := c.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil // removed meanwhile: nothing below it
		}
		return err
	}
	for _, e := range entries {
		p := pathpkg.Join(dir, e.Name())
		if e.IsDir() {
			if err := f.walk(ctx, c, p, out, false); err != nil {
				return err
			}
			continue
		}
		*out = append(*out, fsbackend.FileInfo{Name: p[1:], Size: e.Size(), ModTime: e.ModTime()})
	}
	return nil
}

// Remove implements fsbackend.FS. Emptied parent directories are kept: on
// HDFS an operator may have put a quota, owner or permissions on them.
func (f *FS) Remove(ctx context.Context, name string) error {
	if err := fsbackend.ValidName(name); err != nil {
		return err
	}
	p := hpath(name)
	return f.do(ctx, "remove", p, func(c *client) error {
		st, err := c.c.Stat(p)
		if err != nil {
			return err
		}
		if st.IsDir() {
			return fs.ErrNotExist
		}
		return c.c.Remove(p)
	})
}

// RemoveAll implements fsbackend.DirRemover: a stat of the directory,
// then one recursive delete request for it (Client.RemoveTree, without
// the second stat Client.RemoveAll makes), a single transaction at the
// NameNode however many files lie below. A missing dir, or a file named
// dir, is left as it is.
func (f *FS) RemoveAll(ctx context.Context, dir string) error {
	if err := fsbackend.ValidName(dir); err != nil {
		return err
	}
	p := hpath(dir)
	return f.do(ctx, "removeall", p, func(c *client) error {
		st, err := c.c.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if !st.IsDir() {
			return nil
		}
		return c.c.RemoveTree(p)
	})
}

var _ fsbackend.DirRemover = (*FS)(nil)

// Rename implements fsbackend.FS: HDFS rename2 with overwrite, atomic at
// the NameNode. Missing parents of newName are made first.
func (f *FS) Rename(ctx context.Context, oldName, newName string) error {
	if err := fsbackend.ValidName(oldName); err != nil {
		return err
	}
	if err := fsbackend.ValidName(newName); err != nil {
		return err
	}
	op, np := hpath(oldName), hpath(newName)
	return f.do(ctx, "rename", op, func(c *client) error {
		st, err := c.c.Stat(op)
		if err != nil {
			return err
		}
		if st.IsDir() {
			return fs.ErrNotExist
		}
		if err := c.c.MkdirAll(pathpkg.Dir(np), fsbackend.DirMode(f.cfg.Umask)); err != nil {
			return err
		}
		return c.c.Rename(op, np)
	})
}

// Close implements fsbackend.FS. It releases this FS's reference on its
// client; files still open keep theirs until they are closed.
func (f *FS) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	f.closed = true
	if f.cur != nil {
		f.cache.release(f.cur)
		f.cur = nil
	}
	return nil
}

// contextBackground is the context of clean-up calls that have none.
func contextBackground() context.Context { return context.Background() }
