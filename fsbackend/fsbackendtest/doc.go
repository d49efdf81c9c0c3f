// Package fsbackendtest is the conformance suite every fsbackend runs, in
// the manner of testing/fstest: each subtest gets a fresh empty FS and
// checks one promise of the contract in fsbackend/fs.go.
package fsbackendtest
