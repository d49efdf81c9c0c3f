package oss_test

import (
	"testing"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/fsbackendtest"
)

// TestLease: the namespace lease on OSS (x-oss-forbid-overwrite) against
// the in-process OSS-protocol server, which honours forbid-overwrite.
func TestLease(t *testing.T) {
	srv := newServer(t)
	p := props(srv)
	fsbackendtest.RunLease(t, func(t *testing.T) fsbackend.FS { return open(t, p) }, "ns/cluster-a")
}
