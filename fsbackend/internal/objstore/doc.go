// Package objstore holds what the object-store back ends (s3, cos, oss, gcs)
// share, so that each of them only speaks its own protocol, in the manner
// of pebble's objstorage/remote:
//
//   - FS is the file-system layer, written once: a back end implements
//     Driver (Head, a ranged Get pinned to a version, PutIfAbsent, Delete,
//     Copy, one page of List, Sum, Classify; optionally Mover and
//     Explainer) on its SDK, and New turns it into an fsbackend.FS (see FS
//     for what each method does). Config holds what differs between the
//     back ends.
//   - Retry runs one request until it succeeds, fails for good, or the
//     overall deadline passes, with capped exponential backoff and jitter
//     between attempts; the Driver's Classify says what is Transient.
//   - Stats counts objects and bytes made durable and the retries taken,
//     for the "bytes written per byte of new data" figure and for metrics.
//   - Redactor keeps credential values out of errors and logs.
//   - Property helpers shared by the back ends' ParseProperties: BucketURL
//     (scheme://bucket[/prefix]), Bool, Endpoint, RetryFromProperties and
//     SecretHash (a one-way identity of credentials for client cache keys).
//
// The tests run the conformance suite over an in-memory Driver with fault
// injection. Sub-package s3test (tests only) runs gofakes3 in process with
// fault injection (503 SlowDown, 500, lost answers) and reaches the moto
// server named by STOWAGE_TEST_S3_ENDPOINT.
package objstore
