package checkpoint

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/stowage/stowage/config"
	"github.com/stowage/stowage/fsbackend"
)

// FactoryOptions is what a Factory receives: the values of the
// seatunnel.engine.checkpoint.storage block, as package config validated
// them (namespace ends with "/"; the back-end keys are checked only for
// the built-in hdfs and localfile).
type FactoryOptions struct {
	// Namespace is plugin-config's namespace (empty: DefaultNamespace).
	Namespace string
	// MaxRetained is max-retained (see Options.MaxRetained).
	MaxRetained int
	// Properties is the whole plugin-config block (namespace included,
	// normalised): for hdfs storage.type, fs.defaultFS, buckets,
	// fs.<scheme>.*, Kerberos, seatunnel.hadoop.*; for a user's factory
	// whatever keys its users write, unchecked by config.
	Properties fsbackend.Properties
	// Logger receives warnings; nil discards them.
	Logger *slog.Logger
	// AsyncQueue and AsyncWorkers size the asynchronous store pool.
	AsyncQueue, AsyncWorkers int
	// OnDamage, if set, is called for every damaged file a read skipped.
	OnDamage func(Damage)
	// Fence, if set, is asked before every store and delete (see
	// Options.Fence). A factory of its own may ignore it; stowage then
	// holds the namespace lease for it without fencing its writes.
	Fence func() error
}

// Factory builds a Storage: the CheckpointStorageFactory of SeaTunnel's
// microkernel. A factory must not keep opts.Properties after it returns.
type Factory func(ctx context.Context, opts FactoryOptions) (Storage, error)

var (
	factoryMu sync.RWMutex
	factories = map[string]Factory{}
)

// Names of the built-in factories.
const (
	// StorageHDFS is the one storage for every storage.type: it opens the
	// back end that plugin-config selects with fsbackend.Open.
	StorageHDFS = "hdfs"
	// StorageLocalFile is SeaTunnel's deprecated local file storage; it
	// logs a warning and behaves like hdfs with fs.defaultFS file:///.
	StorageLocalFile = "localfile"
)

func init() {
	Register(StorageHDFS, hdfsFactory)
	Register(StorageLocalFile, localFileFactory)
}

// Register makes a Factory available to New under name, the value of
// seatunnel.engine.checkpoint.storage.type that selects it, matched
// case-insensitively. A name must be one config accepts there
// (config.ValidCheckpointStorageName: 1 to 64 ASCII letters, digits, '.',
// '_' or '-', starting with a letter). It panics if name is not, f is nil
// or name is taken, like database/sql.Register; call it from an init
// function. It is safe for concurrent use.
func Register(name string, f Factory) {
	key := strings.ToLower(strings.TrimSpace(name))
	if !config.ValidCheckpointStorageName(key) || f == nil {
		panic(fmt.Sprintf("stowage/checkpoint: Register(%q): the name is not a well-formed checkpoint storage name or the factory is nil", name))
	}
	factoryMu.Lock()
	defer factoryMu.Unlock()
	if _, dup := factories[key]; dup {
		panic("stowage/checkpoint: Register called twice for " + key)
	}
	factories[key] = f
}

// Registered returns the names of the registered factories, sorted.
func Registered() []string {
	factoryMu.RLock()
	defer factoryMu.RUnlock()
	return slices.Sorted(maps.Keys(factories))
}

// New builds the checkpoint storage registered under name. An unknown name
// gives an error wrapping ErrUnknownStorage that names the key
// seatunnel.engine.checkpoint.storage.type, the value and the registered
// names.
func New(ctx context.Context, name string, opts FactoryOptions) (Storage, error) {
	key := strings.ToLower(strings.TrimSpace(name))
	factoryMu.RLock()
	f := factories[key]
	factoryMu.RUnlock()
	if f == nil {
		return nil, fmt.Errorf("%w: key seatunnel.engine.checkpoint.storage.type: %q (known: %s)", ErrUnknownStorage, name, strings.Join(Registered(), ", "))
	}
	return f(ctx, opts)
}

func hdfsFactory(ctx context.Context, opts FactoryOptions) (Storage, error) {
	fsys, err := fsbackend.Open(ctx, opts.Properties)
	if err != nil {
		return nil, fmt.Errorf("stowage/checkpoint: open checkpoint storage back end: %w", err)
	}
	s, err := Open(ctx, Options{
		FS: fsys, Namespace: opts.Namespace, MaxRetained: opts.MaxRetained, Logger: opts.Logger,
		AsyncQueue: opts.AsyncQueue, AsyncWorkers: opts.AsyncWorkers, OnDamage: opts.OnDamage, Fence: opts.Fence,
	})
	if err != nil {
		_ = fsys.Close()
		return nil, err
	}
	s.owned = fsys
	return s, nil
}

func localFileFactory(ctx context.Context, opts FactoryOptions) (Storage, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	log.Warn("stowage/checkpoint: checkpoint storage type localfile is deprecated; use type hdfs with plugin-config storage.type: hdfs and fs.defaultFS: file:///")
	opts.Properties = localFileProperties(opts.Properties)
	return hdfsFactory(ctx, opts)
}
