// Package fsbackendtest is the conformance suite that every fsbackend.FS
// implementation runs, in the manner of testing/fstest.TestFS.
//
// A back end's test calls Run (or RunWith, to shrink the large-file case
// against a slow remote server) with a constructor that returns a fresh,
// empty FS for each subtest:
//
//	func TestConformance(t *testing.T) {
//		fsbackendtest.Run(t, func(t *testing.T) fsbackend.FS {
//			f, err := local.New(t.TempDir())
//			if err != nil {
//				t.Fatal(err)
//			}
//			return f
//		})
//	}
//
// The suite checks the documented contract of fsbackend.FS, Writer and
// Reader: exclusive Create (and, where Capabilities reports
// ConditionalCreate, that racing writers of one name never both succeed),
// implicit parent directories, visibility after Close, fs.ErrNotExist for
// missing names, recursive sorted List of files only, Remove and Rename
// semantics, Abort leaving nothing behind (and keeping a file a successful
// Close finished), Sync against DurableAppend,
// ErrInvalidName for every method, ErrClosed after Close, ReadAt at and
// past the end, concurrent use (including creates racing removes that
// empty their directory), names that need escaping on object stores,
// a large file, the WriteFile/WriteFileAtomic helpers and fsbackend.Sub
// isolation. It checks only what the contract promises, so that a test
// failure is a back end bug (or a contract ambiguity worth raising), never
// a matter of taste.
//
// Options.Skip skips named subtests with a reason, for a deviation that is
// known and tracked; the skip shows in go test -v. A Reader that ignores
// Close (no fsbackend.ErrClosed afterwards) is reported by a skip of
// ReaderClosed rather than a failure, until every back end tracks it.
//
// Each subtest closes its FS when it ends and ignores the error, so newFS
// may register its own cleanups too. Subtests do not run in parallel with
// each other; a few start goroutines of their own and wait for them.
package fsbackendtest
