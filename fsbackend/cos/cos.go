package cos

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/internal/objstore"
	"github.com/stowage/stowage/fsbackend/s3"
)

const pkg = "stowage/fsbackend/cos"

// Property keys read by ParseProperties.
const (
	KeyBucket         = "cos.bucket"
	KeyRegion         = "fs.cosn.bucket.region"
	KeyRegionLegacy   = "fs.cosn.userinfo.region"
	KeyEndpoint       = "fs.cosn.endpoint"
	KeyEndpointSuffix = "fs.cosn.bucket.endpoint_suffix"
	KeyPathStyle      = "fs.cosn.path.style.access"
	KeySecretID       = "fs.cosn.userinfo.secretId"
	KeySecretKey      = "fs.cosn.userinfo.secretKey"
	KeyProvider       = "fs.cosn.credentials.provider"
	KeyMaxRetries     = "fs.cosn.maxRetries"
	KeyDisableCache   = "disable.cache"
)

// Environment variables of the environment provider.
const (
	EnvSecretID  = "COSN_SECRET_ID"
	EnvSecretKey = "COSN_SECRET_KEY"
)

var providerClasses = map[string]string{
	"org.apache.hadoop.fs.cosn.auth.SimpleCredentialsProvider":              "simple",
	"org.apache.hadoop.fs.auth.SimpleCredentialProvider":                    "simple",
	"org.apache.hadoop.fs.cosn.auth.EnvironmentVariableCredentialsProvider": "environment",
	"org.apache.hadoop.fs.auth.EnvironmentVariableCredentialProvider":       "environment",
}

// KnownProviders lists the accepted values of fs.cosn.credentials.provider.
func KnownProviders() []string {
	return slices.Sorted(maps.Keys(providerClasses))
}

// ParseProperties turns SeaTunnel/Hadoop-COS properties into the Options
// of the s3 back end. Errors name the offending key and never hold a
// secret.
func ParseProperties(ctx context.Context, p fsbackend.Properties) (s3.Options, error) {
	o := s3.Options{Scheme: "cos", ChecksumWhenRequired: true,
		PutHeaders: map[string]string{"x-cos-forbid-overwrite": "true"}}
	var err error
	if o.Bucket, o.Prefix, err = objstore.BucketURL(pkg, KeyBucket, p.Get(KeyBucket, ""), "cosn", "cos"); err != nil {
		return o, err
	}
	o.Region = p.Get(KeyRegion, p.Get(KeyRegionLegacy, ""))
	if o.Endpoint, err = objstore.Endpoint(pkg, KeyEndpoint, p.Get(KeyEndpoint, ""), true); err != nil {
		return o, err
	}
	override := o.Endpoint != ""
	if !override {
		suffix := p.Get(KeyEndpointSuffix, "")
		switch {
		case suffix != "":
			if o.Endpoint, err = objstore.Endpoint(pkg, KeyEndpointSuffix, suffix, true); err != nil {
				return o, err
			}
		case o.Region != "":
			o.Endpoint = "https://cos." + o.Region + ".myqcloud.com"
		default:
			return o, fmt.Errorf("%s: key %s is required (the bucket's region, such as ap-guangzhou)", pkg, KeyRegion)
		}
	}
	if o.Region == "" {
		o.Region = "ap-guangzhou" // only signs requests to an explicit endpoint
	}
	if o.PathStyle, err = objstore.Bool(pkg, p, KeyPathStyle, override); err != nil {
		return o, err
	}
	if o.DisableCache, err = objstore.Bool(pkg, p, KeyDisableCache, false); err != nil {
		return o, err
	}
	if o.Retry, err = objstore.RetryFromProperties(pkg, p, KeyMaxRetries, "fs.cosn.retry.interval"); err != nil {
		return o, err
	}
	o.Credentials, o.CredentialsID, err = buildCredentials(p, os.Getenv)
	return o, err
}

func buildCredentials(p fsbackend.Properties, getenv func(string) string) (aws.CredentialsProvider, string, error) {
	id, key := p.Get(KeySecretID, ""), p.Get(KeySecretKey, "")
	classes := objstore.List(p, KeyProvider)
	if len(classes) == 0 {
		if id != "" || key != "" {
			classes = []string{"org.apache.hadoop.fs.cosn.auth.SimpleCredentialsProvider"}
		} else {
			classes = []string{"org.apache.hadoop.fs.cosn.auth.EnvironmentVariableCredentialsProvider"}
		}
	}
	var errs []error
	for _, class := range classes {
		kind, ok := providerClasses[class]
		if !ok {
			return nil, "", fmt.Errorf("%s: key %s: unknown provider class %q (known: %s)", pkg, KeyProvider, class, strings.Join(KnownProviders(), ", "))
		}
		var sid, skey string
		var missing []string
		switch kind {
		case "simple":
			sid, skey = id, key
			if sid == "" {
				missing = append(missing, KeySecretID)
			}
			if skey == "" {
				missing = append(missing, KeySecretKey)
			}
			if len(missing) > 0 {
				errs = append(errs, fmt.Errorf("%s: key %s: %s needs %s, not set", pkg, KeyProvider, class, strings.Join(missing, " and ")))
				continue
			}
		case "environment":
			sid, skey = strings.TrimSpace(getenv(EnvSecretID)), strings.TrimSpace(getenv(EnvSecretKey))
			if sid == "" {
				missing = append(missing, EnvSecretID)
			}
			if skey == "" {
				missing = append(missing, EnvSecretKey)
			}
			if len(missing) > 0 {
				errs = append(errs, fmt.Errorf("%s: key %s: %s needs the environment variables %s and %s; not set: %s", pkg, KeyProvider, class, EnvSecretID, EnvSecretKey, strings.Join(missing, ", ")))
				continue
			}
		}
		return aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(sid, skey, "")), kind + ":" + objstore.SecretHash(sid, skey), nil
	}
	return nil, "", errors.Join(errs...)
}

// Open builds a COS FS from properties.
func Open(ctx context.Context, p fsbackend.Properties) (*s3.FS, error) {
	o, err := ParseProperties(ctx, p)
	if err != nil {
		return nil, err
	}
	return s3.New(ctx, o)
}

func init() {
	fsbackend.Register("cos", func(ctx context.Context, p fsbackend.Properties) (fsbackend.FS, error) {
		return Open(ctx, p)
	})
}
