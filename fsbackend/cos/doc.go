// Package cos is the fsbackend for Tencent Cloud Object Storage (COS). It
// registers storage.type "cos" and speaks to COS through its
// S3-compatible endpoint (https://cos.<region>.myqcloud.com, virtual-host
// addressing, AWS Signature V4 with the SecretId/SecretKey), reusing the s3
// back end: the same conditional create, ranged reads, retries, client
// cache and bytes-written counters, and the same tests against gofakes3
// and moto.
//
// Why not cos-go-sdk-v5: it would be a second implementation of the same
// object-store semantics (PUT-on-close writer, ranged reads, retry
// classification, error mapping) to keep correct; the S3 API of COS
// covers everything this back end needs, and the s3 code is already
// tested against two independent S3 servers.
//
// Create-if-absent: each PUT sends both If-None-Match: * and
// x-cos-forbid-overwrite: true (COS's own header for the same promise; it
// is ignored on versioned buckets). The 412 or 409 answer that refuses an
// overwrite is an error matching fs.ErrExist. Against real COS this has
// not been tried from here (no COS is reachable); the tests check that
// both headers are sent.
//
// # Properties (SeaTunnel / Hadoop-COS keys)
//
//	storage.type: cos
//	cos.bucket: cosn://bucket-appid[/prefix]      (cos:// accepted too)
//	fs.cosn.bucket.region: ap-guangzhou           required unless an endpoint is given
//	fs.cosn.userinfo.secretId / fs.cosn.userinfo.secretKey
//	fs.cosn.credentials.provider: class[,class]    tried in order
//	fs.cosn.bucket.endpoint_suffix: host suffix    instead of cos.<region>.myqcloud.com
//	fs.cosn.endpoint: http://127.0.0.1:9000        full endpoint URL override (tests,
//	                                              private deployments); path style
//	fs.cosn.path.style.access: true|false          default false, true with fs.cosn.endpoint
//	fs.cosn.maxRetries: 9                          retries after the first attempt
//	disable.cache: false
//
// Credential providers:
//
//	org.apache.hadoop.fs.cosn.auth.SimpleCredentialsProvider             fs.cosn.userinfo.secretId + secretKey
//	org.apache.hadoop.fs.cosn.auth.EnvironmentVariableCredentialsProvider COSN_SECRET_ID, COSN_SECRET_KEY
//
// (the older org.apache.hadoop.fs.auth.SimpleCredentialProvider and
// EnvironmentVariableCredentialProvider spellings are accepted). Without a
// provider key the static keys are used if set, else the environment. A
// missing key or variable is an error naming it; an unknown class is an
// error listing the known ones. Secrets never appear in errors or logs.
package cos
