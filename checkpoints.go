package stowage

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/stowage/stowage/checkpoint"
	"github.com/stowage/stowage/config"
	"github.com/stowage/stowage/fsbackend/nslease"
	"github.com/stowage/stowage/internal/logscrub"
)

// OpenCheckpointStorage builds the checkpoint storage that
// seatunnel.engine.checkpoint.storage describes: the factory registered
// under its type (hdfs, the deprecated localfile, or one registered with
// checkpoint.Register), given the plugin-config namespace, max-retained
// and the whole plugin-config. config accepts any well-formed type; a type
// no factory is registered for fails here with an error wrapping
// checkpoint.ErrUnknownStorage that names the key
// seatunnel.engine.checkpoint.storage.type, the value and the registered
// names.
//
// It takes no namespace lease: it is for tools and tests that read, or
// write with the cluster stopped. A member writes checkpoints through
// Node.OpenCheckpointStorage, which keeps a second cluster off the
// namespace.
func OpenCheckpointStorage(ctx context.Context, cfg *config.Config, log *slog.Logger) (checkpoint.Storage, error) {
	if cfg == nil {
		cfg = config.Default()
	}
	return openCheckpoints(ctx, cfg, log, nil)
}

func openCheckpoints(ctx context.Context, cfg *config.Config, log *slog.Logger, fence func() error) (checkpoint.Storage, error) {
	if log == nil {
		log = slog.Default()
	}
	log = logscrub.Logger(log)
	s := cfg.Engine.Checkpoint.Storage
	return checkpoint.New(ctx, s.Type, checkpoint.FactoryOptions{
		Namespace:   s.Namespace,
		MaxRetained: s.MaxRetained,
		Properties:  s.PluginConfig,
		Logger:      log,
		Fence:       fence,
	})
}

// OpenCheckpointStorage builds the node's configured checkpoint storage
// (as the package-level OpenCheckpointStorage does) under a namespace
// lease of its own, as the file map stores have theirs (docs/security.md,
// Storage): the records lie in the checkpoint namespace's
// checkpoint.LeaseRecords directory, whatever the map stores use. The
// members of one cluster, and the same cluster restarted on its
// addresses, share it; while another live cluster (or stand-alone member)
// holds it, the call fails with an error matching ErrNamespaceInUse (an
// *nslease.HeldError) that names the namespace and the other cluster's
// members. The storage's stores and deletes are refused with an error
// matching ErrNamespaceLeaseLost (and checkpoint.ErrFenced) while this
// member cannot tell that its cluster still holds the lease, and after
// the node closed. The node keeps the lease until Close (the last member
// of the cluster releases it); opening the storage again reuses it. The
// caller closes the storage.
//
// A storage type of a factory registered with checkpoint.Register gets no
// lease (stowage does not know where it writes), nor do members given an
// in-memory cluster by Options.TestHooks.
func (n *Node) OpenCheckpointStorage(ctx context.Context) (checkpoint.Storage, error) {
	fence, err := n.checkpointLease(ctx)
	if err != nil {
		return nil, err
	}
	return openCheckpoints(ctx, n.cfg, n.log, fence)
}

// checkpointLease takes (or finds) the lease of the checkpoint namespace
// and returns its Check, or nil where there is none.
func (n *Node) checkpointLease(ctx context.Context) (func() error, error) {
	if n.isClosed() {
		return nil, ErrClosed
	}
	s := n.cfg.Engine.Checkpoint.Storage
	props, ok := checkpoint.BackendProperties(s.Type, s.PluginConfig)
	if !ok || n.opts.hooks().View != nil {
		return nil, nil
	}
	dir, err := checkpoint.NamespaceDir(s.Namespace)
	if err != nil {
		return nil, fmt.Errorf("stowage: seatunnel.engine.checkpoint.storage: %w", err)
	}
	key := "checkpoint\x00" + props.String() + "\x00" + dir
	// One acquisition at a time: a second call waits and finds the lease.
	n.ckMu.Lock()
	defer n.ckMu.Unlock()
	if l := n.heldLease(key); l != nil {
		return l.Check, nil
	}
	ttl, err := n.leaseTTL()
	if err != nil {
		return nil, err
	}
	f, err := n.openFS(ctx, props)
	if err != nil {
		return nil, fmt.Errorf("stowage: checkpoint storage: %w", err)
	}
	shown := fmt.Sprintf("checkpoint namespace %q (seatunnel.engine.checkpoint.storage.plugin-config)", s.Namespace)
	l, err := n.acquireLease(ctx, key, f, nslease.Options{Dir: dir, Records: checkpoint.LeaseRecords, Path: shown, TTL: ttl})
	if err != nil {
		return nil, err
	}
	n.leaseMu.Lock()
	// Close takes the node's leases after it marked the node closed: a
	// lease taken meanwhile is this call's to give back.
	if n.isClosed() {
		n.leaseMu.Unlock()
		n.releaseLease(l, n.view == nil || len(n.view.Members()) <= 1)
		return nil, ErrClosed
	}
	n.leases = append(n.leases, l)
	n.leaseMu.Unlock()
	return l.l.Check, nil
}

func (n *Node) isClosed() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.closed
}
