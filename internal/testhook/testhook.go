// Package testhook holds what the project's own tests give a node besides
// its configuration: an in-memory cluster instead of the one the
// configuration names, fault-injecting storage, shorter failure
// detection. Programs leave stowage.Options.TestHooks nil; being internal,
// the type cannot be built outside this module.
package testhook

import (
	"context"

	"github.com/stowage/stowage/cluster"
	"github.com/stowage/stowage/fsbackend"
)

// Hooks replace parts of what a node would build from its configuration.
type Hooks struct {
	// OpenFS, if set, replaces fsbackend.Open for the map stores (to
	// inject faults).
	OpenFS func(ctx context.Context, p fsbackend.Properties) (fsbackend.FS, error)
	// View and Transport, when both set, make the node a member of the
	// cluster they describe instead of the one the configuration names
	// (cluster.StaticView with a cluster.MemNetwork). Close does not
	// close them.
	View      cluster.View
	Transport cluster.Transport
	// Timing overrides the failure-detection timing of the membership
	// layer the configuration starts.
	Timing cluster.Timing
}
