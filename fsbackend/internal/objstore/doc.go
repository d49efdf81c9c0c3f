// Package objstore holds what the object-store back ends (s3, cos, oss, gcs)
// share, so each of them only speaks its own protocol:
//
//   - FS is the file-system layer, written once, in the manner of pebble's
//     objstorage/remote: a back end implements Driver (Head, a ranged Get
//     pinned to a version, PutIfAbsent, Delete, Copy, one page of List,
//     Sum, Classify; optionally Mover and Explainer) on its SDK, and FS
//     turns it into the fsbackend.FS contract: names to object keys below
//     the bucket prefix, capabilities, *fs.PathError errors matching
//     fs.ErrNotExist and fs.ErrExist, credentials scrubbed (Redactor),
//     Remove by Head then Delete, List across pages, create-exclusive
//     with the conditional PUT on Close and recognition of a PUT whose
//     answer was lost, Abort that removes only the writer's own bytes,
//     pinned ranged reads, retries, and the write counters. Config holds
//     what differs between back ends (Create's lookup, the PUT deadline
//     counted from Create, the largest object, the retry policy).
//   - Retry runs one request until it succeeds, fails for good, or the
//     overall deadline passes, with capped exponential backoff and jitter
//     between attempts (throttling such as S3 SlowDown/503 and other 5xx are
//     the usual reasons to retry; the back end decides through its
//     classifier what is retryable).
//   - Writer buffers a whole object in memory and hands it to a PutFunc once
//     on Close: on an object store one PUT is the only durable and atomic
//     write, so the object becomes visible whole or not at all. Sync returns
//     fsbackend.ErrUnsupported; Abort drops the buffer.
//   - Reader serves ReadAt of an object of known size by ranged fetches
//     the back end supplies (only the part within the object is fetched;
//     io.EOF past the end), and fails every call after Close with
//     fsbackend.ErrClosed.
//   - Stats counts objects and bytes made durable and the retries taken,
//     for the "bytes written per byte of new data" figure and for metrics.
//   - Property helpers shared by the back ends' ParseProperties: BucketURL
//     (scheme://bucket[/prefix]), Bool, Endpoint, RetryFromProperties and
//     SecretHash (a one-way identity of credentials for client cache keys).
//
// The API is small and stable: FS, New, Config, Driver, Mover, Explainer,
// Object, Page, Class, Redactor, Retry, RetryPolicy, DefaultRetryPolicy,
// Writer, NewWriter, PutFunc, AbortFunc, Reader, NewReader, FetchFunc,
// Stats, and the property helpers. The tests run the conformance suite
// over an in-memory Driver with fault injection.
// A Writer's Close runs its PUT under the context given to NewWriter (the
// one passed to Create), so the caller's deadline bounds the whole write;
// Abort's clean-up runs without that context's cancellation.
//
// Sub-package s3test (tests only) runs gofakes3 in process with fault
// injection (503 SlowDown, 500, lost answers) and reaches the moto server
// named by STOWAGE_TEST_S3_ENDPOINT.
package objstore
