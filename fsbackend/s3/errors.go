package s3

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"

	"github.com/stowage/stowage/fsbackend/internal/objstore"
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

// Classify implements objstore.Driver:
//   - Missing: the object (not the bucket) does not exist (NoSuchKey,
//     NotFound, 404 other than NoSuchBucket);
//   - Taken: an If-None-Match condition failed (412 PreconditionFailed),
//     or a forbid-overwrite header found the object (COS and OSS answer
//     409 ObjectAlreadyExists / FileAlreadyExists);
//   - Transient: throttling (SlowDown, 503, 429), other server errors
//     (5xx), a conditional write that raced another (409
//     ConditionalRequestConflict), and connection failures. A cancelled
//     or expired context never is.
func (d *driver) Classify(err error) objstore.Class {
	code, status := errorCode(err), statusCode(err)
	switch code {
	case "NoSuchBucket":
		return objstore.Failed
	case "NoSuchKey", "NotFound":
		return objstore.Missing
	case "PreconditionFailed", "ObjectAlreadyExists", "FileAlreadyExists":
		return objstore.Taken
	case "SlowDown", "Throttling", "ThrottlingException", "RequestTimeout", "RequestTimeTooSkewed",
		"InternalError", "ServiceUnavailable", "ConditionalRequestConflict", "OperationAborted":
		return objstore.Transient
	}
	switch {
	case status == 404:
		return objstore.Missing
	case status == 412:
		return objstore.Taken
	case status == 429 || status >= 500:
		return objstore.Transient
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return objstore.Failed
	case retry.RetryableConnectionError{}.IsErrorRetryable(err) == aws.TrueTernary:
		return objstore.Transient
	}
	return objstore.Failed
}
