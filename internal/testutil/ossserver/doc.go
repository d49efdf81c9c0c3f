// Package ossserver is an in-process Aliyun OSS protocol server for tests:
// no OSS server can be installed on the build machines, and general S3
// fakes ignore the two OSS features stowage relies on (forbid-overwrite and
// append positions) and check no signatures.
//
// New starts an httptest server on 127.0.0.1 that speaks enough of the OSS
// REST protocol, in path style (the Go SDK uses path style for an IP
// endpoint: /bucket/object), for github.com/aliyun/aliyun-oss-go-sdk/oss:
//
//   - PutObject, honouring x-oss-forbid-overwrite: true (409 FileAlreadyExists)
//     and Content-MD5 (400 InvalidDigest); the answer carries ETag and
//     x-oss-hash-crc64ecma, which the SDK compares with its own CRC-64.
//   - CopyObject (PUT with x-oss-copy-source), also honouring forbid-overwrite.
//   - GetObject with a Range (206 and Content-Range; a range starting past
//     the end is 416 InvalidRange) and If-Match (412 PreconditionFailed).
//   - HeadObject and GetObjectMeta (HEAD ?objectMeta), with the error in the
//     base64 x-oss-err header as OSS does for HEAD.
//   - DeleteObject (204 even when the object is missing, like OSS) and
//     DeleteMultipleObjects (POST ?delete, Content-MD5 required).
//   - ListObjectsV2 (list-type=2 with prefix, delimiter, max-keys,
//     start-after, continuation-token, encoding-type=url).
//   - AppendObject (POST ?append&position=N): a wrong position is 409
//     PositionNotEqualToLength; every answer carries
//     x-oss-next-append-position; appending to a normal object is 409
//     ObjectNotAppendable.
//
// Every request must carry a valid OSS V1 signature
// ("Authorization: OSS AccessKeyId:Signature", HMAC-SHA1 over the verb,
// Content-MD5, Content-Type, Date, the x-oss-* headers and the canonical
// resource with its signed sub-resources). The SDK version in go.mod
// (v3.0.2) signs with V1 by default, so that is what is verified; V2 and V4
// signatures are refused with 403 AccessDenied rather than checked. An
// unknown AccessKeyId is 403 InvalidAccessKeyId, a wrong secret is 403
// SignatureDoesNotMatch, a Date more than 15 minutes off is 403
// RequestTimeTooSkewed, and when the credential has a security token the
// x-oss-security-token header must match it (403 InvalidSecurityToken).
//
// What it does not do or check: virtual-hosted-style requests, presigned
// URLs (signature in the query), V2/V4 signatures, ACLs and bucket policies,
// versioning, multipart uploads, storage classes, server-side encryption,
// object metadata beyond Content-Type, the 5 GB append cap, and request
// rate limits. Data lives in memory only.
//
// Hooks for tests: FailNext makes the next N requests answer 503
// ServiceUnavailable before anything else is looked at, and Stats counts
// requests and the bytes of object data stored by PUT and append.
//
// A Server is safe for concurrent use.
package ossserver
