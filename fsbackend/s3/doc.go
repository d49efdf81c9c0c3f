// Package s3 is the fsbackend for Amazon S3 and S3-compatible stores, on
// aws-sdk-go-v2. It registers storage.type "s3"; the cos back end reuses it
// through COS's S3-compatible endpoint.
//
// # Semantics
//
// Capabilities: no DurableAppend (Writer.Sync returns
// fsbackend.ErrUnsupported), no AtomicRename (Rename is CopyObject then
// DeleteObject), ConditionalCreate. A Writer keeps the object in memory and
// Close makes one PutObject with If-None-Match: *; the object is durable
// when that PUT answered 200, and a 412 means another writer created the
// name first (an error matching fs.ErrExist). Create itself makes no
// request, so an existing name is refused at Close, not at Create. Abort
// discards the buffer; after a failed Close it deletes the object only if
// the object there holds exactly this writer's bytes (a PUT whose answer
// was lost). Open makes a HEAD for the size; each ReadAt is one ranged GET.
// List is ListObjectsV2 below dir+"/" with no delimiter, every page,
// sorted. Stat is HEAD; Remove is HEAD (a missing key is fs.ErrNotExist,
// since S3's DELETE succeeds on it) then DELETE. The object key of a name
// is <prefix>/<name>, the prefix being the path of s3.bucket. ReadAt runs
// under the context given to Open. This package is the S3 driver and the
// properties; the file-system layer (names, errors, retries, writer and
// reader) is objstore's, shared with the oss and gcs back ends.
//
// Requests that fail with throttling (SlowDown, 503, 429), another 5xx,
// 409 ConditionalRequestConflict, or a connection error are retried with
// capped exponential backoff and jitter (objstore.DefaultRetryPolicy: 10
// attempts, 100 ms doubling to 5 s, within 2 minutes, or the context's
// deadline if earlier); a write that still fails returns its error. A
// conditional PUT retried after a lost answer that then meets 412 checks
// whether the object there is its own (same size and MD5 ETag).
//
// BytesWritten, ObjectsWritten and Retries count what one FS did, for the
// write-amplification figure and metrics.
//
// # Properties (SeaTunnel / Hadoop S3A keys)
//
//	storage.type: s3
//	s3.bucket: s3a://bucket[/prefix]        also s3:// and s3n://
//	fs.s3a.endpoint: host[:port] or URL      default: AWS for the region
//	fs.s3a.connection.ssl.enabled: true      scheme for an endpoint given without one
//	fs.s3a.endpoint.region (or region)       default $AWS_REGION, else us-east-1
//	fs.s3a.path.style.access: true|false     default true for non-AWS endpoints
//	fs.s3a.access.key / fs.s3a.secret.key / fs.s3a.session.token
//	fs.s3a.aws.credentials.provider: class[,class...]   tried in order
//	fs.s3a.retry.limit: 9                    retries after the first attempt
//	fs.s3a.retry.interval: 100ms             first backoff
//	disable.cache: false                     true: a client of its own
//
// Against a non-AWS endpoint the client uses path-style addressing and
// sends SDK checksums only where required (RequestChecksumCalculation and
// ResponseChecksumValidation WhenRequired), which other S3 servers need.
//
// Credential provider classes (AWS SDK v1, SDK v2 and Hadoop spellings are
// all accepted; KnownProviders lists them):
//
//	org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider     fs.s3a.access.key + fs.s3a.secret.key
//	org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider  the same plus fs.s3a.session.token
//	org.apache.hadoop.fs.s3a.AnonymousAWSCredentialsProvider  unsigned requests
//	com.amazonaws.auth.EnvironmentVariableCredentialsProvider AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY [, AWS_SESSION_TOKEN]
//	com.amazonaws.auth.DefaultAWSCredentialsProviderChain     the SDK's default chain
//	com.amazonaws.auth.InstanceProfileCredentialsProvider     EC2 instance profile (IMDS)
//	com.amazonaws.auth.ContainerCredentialsProvider           ECS task role (AWS_CONTAINER_CREDENTIALS_*)
//	com.amazonaws.auth.WebIdentityTokenCredentialsProvider    AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN (EKS IRSA)
//
// Without a provider key, static keys are used if set, else the default
// chain. A provider whose keys or environment variables are missing is an
// error naming them (in a list, it is skipped and the next one tried); an
// unknown class is an error listing the known ones. Unlike SeaTunnel's
// bundled SDK v1, web identity (IRSA) works. The instance profile provider
// honours AWS_EC2_METADATA_SERVICE_ENDPOINT, the container provider
// AWS_CONTAINER_CREDENTIALS_FULL_URI or _RELATIVE_URI with
// AWS_CONTAINER_AUTHORIZATION_TOKEN(_FILE), and web identity calls
// AssumeRoleWithWebIdentity at the STS endpoint the SDK's configuration
// names (AWS_ENDPOINT_URL_STS, AWS_ENDPOINT_URL, or the regional default),
// with AWS_ROLE_SESSION_NAME if set.
//
// Clients are cached (golang-lru, 64 entries) by endpoint, region, bucket,
// addressing, provider and a one-way hash of static keys, and shared by the
// FSs that match, unless disable.cache is true. SeaTunnel disables its
// Hadoop FileSystem cache by default; here a cached client only shares
// connections, so the cache is on by default.
//
// Secrets (keys, tokens) never appear in errors or logs; logs are at Debug
// level (retries) through log/slog.
package s3
