// Package oss is the fsbackend for Aliyun Object Storage Service, on
// github.com/aliyun/aliyun-oss-go-sdk/oss. Importing it registers the
// back end as storage.type "oss".
//
// # What it guarantees
//
// Capabilities: DurableAppend false, AtomicRename false, ConditionalCreate
// true. A Writer buffers in memory and sends one PutObject on Close, with
// x-oss-forbid-overwrite: true and a Content-MD5, so an object is either
// wholly there or absent and two writers can never both create the same
// name (a losing writer's Close fails with an error matching fs.ErrExist).
// Create also looks the name up first, so that an existing name is refused
// before any data is buffered; the PUT's forbid-overwrite is what makes it
// safe. Forbid-overwrite is ignored by OSS on buckets with versioning
// enabled: do not use a versioned bucket. Sync returns
// fsbackend.ErrUnsupported: only Close makes data durable. This is why the
// map store writes one new immutable object per batch on object stores
// (SeaTunnel's OSS writer rewrote the whole object on every write): the
// bytes sent per byte of new data stay near 1 however large the map is.
//
// Rename is CopyObject then DeleteObject, not atomic. Remove looks the
// object up first because OSS's DeleteObject succeeds for missing keys;
// a missing file is an error matching fs.ErrNotExist. Open looks the object
// up once (size, ETag) and reads with range GETs carrying If-Match, so a
// reader never mixes two versions of a replaced object. List uses
// ListObjectsV2 with the directory's prefix, follows continuation tokens,
// skips "directory marker" keys ending in "/", and sorts by name.
//
// A Writer's Close uses the context given to Create for its PUT, and a
// Writer refuses more than 5 GiB, the limit of one PutObject. Abort before
// Close sends nothing; after a Close that failed it removes the object the
// PUT may have stored, when it holds exactly the writer's bytes (size and
// CRC-64), never one that a FileAlreadyExists answer showed to be another
// writer's; after a successful Close it does nothing. This package is the
// OSS driver, credentials and properties; the file-system layer (names,
// errors, retries, writer and reader) and the bucket URL parsing are
// objstore's, shared with the s3, cos and gcs back ends.
//
// # Retries
//
// Throttling (429, Throttling), server errors (5xx), network errors and CRC
// mismatches are retried with exponential backoff and jitter, up to
// RetryPolicy.MaxAttempts (fs.oss.attempts.maximum, default 10) and within
// RetryPolicy.Deadline (default 2 minutes) and the context's deadline,
// whichever comes first. When a retried PutObject meets FileAlreadyExists,
// the object's CRC-64 and size are compared with the data sent: a match
// means an earlier attempt succeeded and its answer was lost, so Close
// succeeds.
//
// # Properties
//
//	storage.type: oss
//	oss.bucket: oss://bucket[/prefix]          required; objects live below prefix
//	fs.oss.endpoint: oss-cn-hangzhou.aliyuncs.com   required; http(s):// allowed
//	fs.oss.accessKeyId / fs.oss.accessKeySecret [/ fs.oss.securityToken]   static credentials
//	fs.oss.credentials.provider: com.aliyun.oss.common.auth.EnvironmentVariableCredentialsProvider
//	    reads OSS_ACCESS_KEY_ID, OSS_ACCESS_KEY_SECRET and optional OSS_SESSION_TOKEN
//	fs.oss.credentials.provider: org.apache.hadoop.fs.aliyun.oss.AliyunCredentialsProvider
//	    the static keys above (Hadoop's default provider)
//	fs.oss.attempts.maximum: 10                attempts per operation
//	disable.cache: false                       share clients between FS values
//
// Other fs.oss.* keys (Hadoop settings such as fs.oss.connection.timeout)
// are accepted and ignored. Static keys together with the environment
// provider are refused as contradictory. Requests are signed with OSS
// signature V1, the SDK's default; the endpoint is used in path style when
// it is an IP address (as in tests) and virtual-host style otherwise.
//
// Clients are cached in a small LRU (github.com/hashicorp/golang-lru/v2)
// keyed by endpoint and credentials, so that many maps and the checkpoint
// storage share connections; disable.cache: true gives each FS its own
// client, whose idle connections are closed by FS.Close.
//
// Secrets never appear in errors or logs: errors name keys and object
// names, logs (log/slog, debug level only) print properties through
// fsbackend.Properties.String. As in the s3 and cos back ends the access
// key id counts as a secret: OSS quotes it in some error answers
// (OSSAccessKeyId, the string to sign), so every error and log line the
// FS makes has the access key id, secret and token removed.
package oss
