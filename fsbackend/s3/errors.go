package s3

import (
	"context"
	"errors"
	"io/fs"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
)

func statusCode(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

func errorCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// isNotFound: the object (not the bucket) does not exist.
func isNotFound(err error) bool {
	switch errorCode(err) {
	case "NoSuchBucket":
		return false
	case "NoSuchKey", "NotFound":
		return true
	}
	return statusCode(err) == 404
}

// isPrecondition: an If-None-Match/If-Match condition failed (412), or a
// forbid-overwrite header found the object (COS, OSS answer 409
// ObjectAlreadyExists / FileAlreadyExists).
func isPrecondition(err error) bool {
	switch errorCode(err) {
	case "PreconditionFailed", "ObjectAlreadyExists", "FileAlreadyExists":
		return true
	}
	return statusCode(err) == 412
}

// retryable says whether a failed request may succeed when sent again:
// throttling (SlowDown, 503, 429), other server errors (5xx), a
// conditional write that raced another (409 ConditionalRequestConflict),
// and connection failures. A cancelled or expired context never is.
func retryable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	switch errorCode(err) {
	case "SlowDown", "Throttling", "ThrottlingException", "RequestTimeout", "RequestTimeTooSkewed",
		"InternalError", "ServiceUnavailable", "ConditionalRequestConflict", "OperationAborted":
		return true
	}
	if c := statusCode(err); c == 429 || c >= 500 {
		return true
	}
	return retry.RetryableConnectionError{}.IsErrorRetryable(err) == aws.TrueTernary
}

// mapErr turns an SDK error into the fsbackend error for op on path:
// a missing object matches fs.ErrNotExist, a failed create-if-absent
// fs.ErrExist; the SDK error stays in the chain.
func mapErr(op, path string, err error) error {
	switch {
	case err == nil:
		return nil
	case isNotFound(err):
		err = errors.Join(fs.ErrNotExist, err)
	case isPrecondition(err) && op == "create":
		err = errors.Join(fs.ErrExist, err)
	}
	return &fs.PathError{Op: op, Path: path, Err: err}
}
