package s3_test

import (
	"testing"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/fsbackendtest"
	"github.com/stowage/stowage/fsbackend/internal/objstore/s3test"
)

// TestLeaseGofakes3: the namespace lease on S3 (If-None-Match: *).
func TestLeaseGofakes3(t *testing.T) {
	srv := newServer(t)
	p := props(t, srv)
	fsbackendtest.RunLease(t, func(t *testing.T) fsbackend.FS { return open(t, p) }, "ns/cluster-a")
}

// TestLeaseMoto: the same against the moto server (scripts/test starts
// it), whose If-None-Match support is what a second implementation says.
func TestLeaseMoto(t *testing.T) {
	s3test.ExternalEndpoint(t)
	p := motoProps(t)
	fsbackendtest.RunLease(t, func(t *testing.T) fsbackend.FS { return open(t, p) }, "ns/cluster-a")
}
