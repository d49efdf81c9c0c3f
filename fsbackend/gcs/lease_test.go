package gcs_test

import (
	"testing"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/fsbackendtest"
	"github.com/stowage/stowage/fsbackend/gcs"
)

// TestLease: the namespace lease on GCS (ifGenerationMatch=0) against
// fake-gcs-server.
func TestLease(t *testing.T) {
	fx := newFixture(t, gcs.RetryPolicy{}, "root")
	fsbackendtest.RunLease(t, func(t *testing.T) fsbackend.FS { return fx.fs }, "ns/cluster-a")
}
