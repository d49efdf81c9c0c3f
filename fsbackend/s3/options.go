package s3

import (
	"context"
	"log/slog"
	"net/url"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/internal/objstore"
)

// Options describe one S3 (or S3-compatible) bucket. Build them with
// ParseProperties, or fill them in directly for New.
type Options struct {
	// Bucket is the bucket name; Prefix, if not empty, is a key prefix
	// (without leading or trailing slash) under which every name lives,
	// as object key Prefix + "/" + name.
	Bucket string
	Prefix string
	// Endpoint is the service URL (https://s3.eu-west-1.amazonaws.com,
	// http://127.0.0.1:9000); empty means AWS's endpoint for Region.
	Endpoint string
	// Region signs requests; us-east-1 when empty.
	Region string
	// PathStyle puts the bucket in the URL path instead of the host name.
	PathStyle bool
	// ChecksumWhenRequired sends and checks the SDK's extra checksums only
	// where the API requires them; other S3 implementations reject the
	// newer checksum headers. Set for every non-AWS endpoint.
	ChecksumWhenRequired bool
	// Credentials signs requests; nil means anonymous requests.
	Credentials aws.CredentialsProvider
	// CredentialsID identifies Credentials for the client cache without
	// revealing a secret (a provider name, or a hash of static keys). The
	// cache is used only when it is not empty and DisableCache is false.
	CredentialsID string
	DisableCache  bool
	// Retry bounds the retries of throttled (SlowDown, 503) and failed
	// (5xx, connection) requests.
	Retry objstore.RetryPolicy
	// PutHeaders are extra headers sent with every PutObject (COS uses
	// x-cos-forbid-overwrite).
	PutHeaders map[string]string
	// Scheme names the URL scheme and package in errors and logs: "s3"
	// (the default) or "cos".
	Scheme string
	// Logger receives debug logs (retries); slog.Default() when nil.
	Logger *slog.Logger
}

// Property keys read by ParseProperties, as Hadoop S3A spells them.
const pkg = "stowage/fsbackend/s3"

const (
	KeyBucket       = "s3.bucket"
	KeyEndpoint     = "fs.s3a.endpoint"
	KeyRegion       = "fs.s3a.endpoint.region"
	KeyRegionShort  = "region"
	KeyPathStyle    = "fs.s3a.path.style.access"
	KeySSL          = "fs.s3a.connection.ssl.enabled"
	KeyAccessKey    = "fs.s3a.access.key"
	KeySecretKey    = "fs.s3a.secret.key"
	KeySessionToken = "fs.s3a.session.token"
	KeyRetryLimit   = "fs.s3a.retry.limit"
	KeyRetryInterv  = "fs.s3a.retry.interval"
	KeyDisableCache = "disable.cache"
)

// ParseProperties turns SeaTunnel/Hadoop S3A properties into Options.
// Errors name the offending key and never contain a secret value.
func ParseProperties(ctx context.Context, p fsbackend.Properties) (Options, error) {
	var o Options
	bucket, prefix, err := objstore.BucketURL(pkg, KeyBucket, p.Get(KeyBucket, ""), "s3a", "s3", "s3n")
	if err != nil {
		return o, err
	}
	o.Bucket, o.Prefix = bucket, prefix
	o.Scheme = "s3"
	ssl, err := objstore.Bool(pkg, p, KeySSL, true)
	if err != nil {
		return o, err
	}
	o.Endpoint, err = objstore.Endpoint(pkg, KeyEndpoint, p.Get(KeyEndpoint, ""), ssl)
	if err != nil {
		return o, err
	}
	o.Region = p.Get(KeyRegion, p.Get(KeyRegionShort, ""))
	if o.Region == "" {
		o.Region = firstEnv(os.Getenv, "AWS_REGION", "AWS_DEFAULT_REGION")
	}
	if o.Region == "" {
		o.Region = "us-east-1"
	}
	nonAWS := o.Endpoint != "" && !isAWSHost(o.Endpoint)
	o.PathStyle, err = objstore.Bool(pkg, p, KeyPathStyle, nonAWS)
	if err != nil {
		return o, err
	}
	o.ChecksumWhenRequired = nonAWS
	if o.DisableCache, err = objstore.Bool(pkg, p, KeyDisableCache, false); err != nil {
		return o, err
	}
	if o.Retry, err = objstore.RetryFromProperties(pkg, p, KeyRetryLimit, KeyRetryInterv); err != nil {
		return o, err
	}
	classes := objstore.List(p, ProviderKey)
	o.Credentials, o.CredentialsID, err = buildCredentials(ctx, credConfig{
		providers: classes,
		accessKey: p.Get(KeyAccessKey, ""),
		secretKey: p.Get(KeySecretKey, ""),
		sessTok:   p.Get(KeySessionToken, ""),
		region:    o.Region,
	})
	if err != nil {
		return o, err
	}
	return o, nil
}

func isAWSHost(endpoint string) bool {
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	h := strings.ToLower(u.Hostname())
	return strings.HasSuffix(h, ".amazonaws.com") || strings.HasSuffix(h, ".amazonaws.com.cn")
}
