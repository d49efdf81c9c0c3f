package objstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stowage/stowage/fsbackend/internal/objstore"
)

// Errors of memDriver, classified as a real SDK's would be.
var (
	errNoKey  = errors.New("mem: NoSuchKey")
	errTaken  = errors.New("mem: PreconditionFailed")
	errDenied = errors.New("mem: AccessDenied for key " + memSecret)
	errNoBuck = errors.New("mem: NoSuchBucket")
	memSecret = "AKIDMEMSECRET01"
	memHint   = "access denied (check the test keys)"
)

type memObject struct {
	data []byte
	gen  int
	mod  time.Time
}

// memDriver is an in-memory objstore.Driver with fault injection and a
// count of the requests it served, by method.
type memDriver struct {
	mu       sync.Mutex
	objects  map[string]memObject
	gen      int
	pageSize int // objects per List page; 0 means 1000
	calls    map[string]int
	gets     []string // "off+n" of each Get

	failNext  int   // the next failNext requests fail with errBusy
	loseNext  int   // the next loseNext PUTs store but answer errBusy
	shortNext int   // the next shortNext Gets send half the body
	failWith  error // every request fails with it while set
}

func newMemDriver() *memDriver {
	return &memDriver{objects: map[string]memObject{}, calls: map[string]int{}}
}

// enter counts a request and returns the fault it must answer, if any.
func (d *memDriver) enter(ctx context.Context, method string) error {
	d.calls[method]++
	if err := ctx.Err(); err != nil {
		return err
	}
	if d.failWith != nil {
		return d.failWith
	}
	if d.failNext > 0 {
		d.failNext--
		return errBusy
	}
	return nil
}

func (d *memDriver) count(method string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.calls[method]
}

// plant stores an object directly, as another writer or tool would.
func (d *memDriver) plant(key string, data []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.gen++
	d.objects[key] = memObject{data: append([]byte(nil), data...), gen: d.gen, mod: time.Now()}
}

func (d *memDriver) object(key string) ([]byte, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	o, ok := d.objects[key]
	return o.data, ok
}

func (d *memDriver) describe(key string, o memObject) objstore.Object {
	return objstore.Object{Key: key, Size: int64(len(o.data)), ModTime: o.mod, Version: strconv.Itoa(o.gen), Sum: d.Sum(o.data)}
}

func (d *memDriver) Head(ctx context.Context, key string) (objstore.Object, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.enter(ctx, "Head"); err != nil {
		return objstore.Object{}, err
	}
	o, ok := d.objects[key]
	if !ok {
		return objstore.Object{}, errNoKey
	}
	return d.describe(key, o), nil
}

func (d *memDriver) Get(ctx context.Context, key, version string, off, n int64) (io.ReadCloser, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.gets = append(d.gets, fmt.Sprintf("%d+%d", off, n))
	if err := d.enter(ctx, "Get"); err != nil {
		return nil, err
	}
	o, ok := d.objects[key]
	switch {
	case !ok:
		return nil, errNoKey
	case version != "" && version != strconv.Itoa(o.gen):
		return nil, errTaken
	}
	end := min(off+n, int64(len(o.data)))
	body := o.data[min(off, end):end]
	if d.shortNext > 0 {
		d.shortNext--
		body = body[:len(body)/2]
	}
	return io.NopCloser(bytes.NewReader(body)), nil
}

func (d *memDriver) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.enter(ctx, "PutIfAbsent"); err != nil {
		return err
	}
	if _, ok := d.objects[key]; ok {
		return errTaken
	}
	d.gen++
	d.objects[key] = memObject{data: append([]byte(nil), data...), gen: d.gen, mod: time.Now()}
	if d.loseNext > 0 {
		d.loseNext--
		return errBusy
	}
	return nil
}

// Delete succeeds on a missing key, as S3's and OSS's DELETE do.
func (d *memDriver) Delete(ctx context.Context, key string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.enter(ctx, "Delete"); err != nil {
		return err
	}
	delete(d.objects, key)
	return nil
}

func (d *memDriver) Copy(ctx context.Context, src, dst string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.enter(ctx, "Copy"); err != nil {
		return err
	}
	o, ok := d.objects[src]
	if !ok {
		return errNoKey
	}
	d.gen++
	d.objects[dst] = memObject{data: o.data, gen: d.gen, mod: time.Now()}
	return nil
}

// List pages by key: the token is the last key of the previous page.
func (d *memDriver) List(ctx context.Context, prefix, token string) (objstore.Page, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.enter(ctx, "List"); err != nil {
		return objstore.Page{}, err
	}
	var keys []string
	for k := range d.objects {
		if strings.HasPrefix(k, prefix) && k > token {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	size := d.pageSize
	if size <= 0 {
		size = 1000
	}
	var p objstore.Page
	for i, k := range keys {
		if i == size {
			p.Next = keys[i-1]
			break
		}
		p.Objects = append(p.Objects, d.describe(k, d.objects[k]))
	}
	return p, nil
}

func (d *memDriver) Sum(data []byte) string {
	return strconv.FormatUint(uint64(crc32.ChecksumIEEE(data)), 16)
}

func (d *memDriver) Classify(err error) objstore.Class {
	switch {
	case errors.Is(err, errNoKey):
		return objstore.Missing
	case errors.Is(err, errTaken):
		return objstore.Taken
	case errors.Is(err, errBusy):
		return objstore.Transient
	}
	return objstore.Failed
}

func (d *memDriver) Explain(err error) string {
	if errors.Is(err, errDenied) {
		return memHint
	}
	return ""
}

// memMover is memDriver with a server-side move.
type memMover struct{ *memDriver }

func (m memMover) Move(ctx context.Context, src, dst string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.enter(ctx, "Move"); err != nil {
		return err
	}
	o, ok := m.objects[src]
	if !ok {
		return errNoKey
	}
	delete(m.objects, src)
	m.objects[dst] = o
	return nil
}

var (
	_ objstore.Driver    = (*memDriver)(nil)
	_ objstore.Explainer = (*memDriver)(nil)
	_ objstore.Mover     = memMover{}
)
