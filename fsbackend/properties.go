package fsbackend

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"
)

// Properties are the storage keys exactly as SeaTunnel users write them,
// under a map store's `properties` or a checkpoint storage's
// `plugin-config`: storage.type, fs.defaultFS, oss.bucket, s3.bucket,
// fs.s3a.*, fs.oss.*, seatunnel.hadoop.*, disable.cache, and so on.
type Properties map[string]string

// Get returns the value of key, trimmed, or def if it is unset or empty.
func (p Properties) Get(key, def string) string {
	if v, ok := p[key]; ok && strings.TrimSpace(v) != "" {
		return strings.TrimSpace(v)
	}
	return def
}

// Redacted returns a copy with every secret value replaced by "******"
// and the user information of every URI value removed (RedactURIs), for
// logs, errors and config dumps.
func (p Properties) Redacted() Properties {
	out := make(Properties, len(p))
	for k, v := range p {
		if IsSecretKey(k) && v != "" {
			v = Redacted
		}
		v = RedactURIs(v)
		out[k] = v
	}
	return out
}

// String prints the properties sorted, with secrets redacted.
func (p Properties) String() string {
	r := p.Redacted()
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s: %s", k, r[k])
	}
	b.WriteByte('}')
	return b.String()
}

// Opener builds an FS from properties. The FS is rooted at the storage's
// root: the local file system's "/", an HDFS cluster's "/", a bucket.
type Opener func(ctx context.Context, p Properties) (FS, error)

var (
	registryMu sync.RWMutex
	registry   = map[string]Opener{}
)

// Register makes a back end available under a storage.type value (or, for
// "hdfs", a fs.defaultFS scheme: "file" and "hdfs"). It panics on a
// duplicate, like database/sql.Register. Back-end packages call it from
// init; import github.com/stowage/stowage/fsbackend/all for every one.
func Register(name string, o Opener) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[name]; dup {
		panic("stowage/fsbackend: Register called twice for " + name)
	}
	registry[name] = o
}

// Registered lists the registered back-end names, sorted.
func Registered() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	out := make([]string, 0, len(registry))
	for k := range registry {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// StorageTypes are the accepted values of the storage.type key.
var StorageTypes = []string{"hdfs", "local", "oss", "s3", "cos", "gcs"}

// Open builds the FS that properties describe. storage.type defaults to
// hdfs, as in SeaTunnel; with storage.type hdfs the scheme of fs.defaultFS
// picks the back end (file:/// is the local disk, hdfs://... is HDFS).
// Errors name the offending key.
func Open(ctx context.Context, p Properties) (FS, error) {
	name, err := BackendName(p)
	if err != nil {
		return nil, err
	}
	registryMu.RLock()
	o := registry[name]
	registryMu.RUnlock()
	if o == nil {
		return nil, fmt.Errorf("stowage/fsbackend: storage back end %q is not built into this program: import github.com/stowage/stowage/fsbackend/%s (or fsbackend/all for every back end) for its side effect (registered: %s)",
			name, name, strings.Join(Registered(), ", "))
	}
	return o(ctx, p)
}

// BackendName returns the registered back-end name that properties select:
// "local", "hdfs", "oss", "s3", "cos" or "gcs".
func BackendName(p Properties) (string, error) {
	t := strings.ToLower(p.Get("storage.type", "hdfs"))
	switch t {
	case "local", "oss", "s3", "cos", "gcs":
		return t, nil
	case "hdfs":
		def := p.Get("fs.defaultFS", "file:///")
		u, err := url.Parse(def)
		if err != nil {
			return "", errors.New(RedactURIs(fmt.Sprintf("stowage/fsbackend: key fs.defaultFS: %q is not a URI: %v", def, err)))
		}
		switch strings.ToLower(u.Scheme) {
		case "file", "":
			return "local", nil
		case "hdfs", "viewfs":
			return "hdfs", nil
		default:
			return "", fmt.Errorf("stowage/fsbackend: key fs.defaultFS: scheme %q is not supported (use file:/// or hdfs://host:port)", u.Scheme)
		}
	default:
		return "", fmt.Errorf("stowage/fsbackend: key storage.type: unknown value %q (known: %s)", t, strings.Join(StorageTypes, ", "))
	}
}
