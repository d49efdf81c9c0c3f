package oss

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/internal/objstore"
)

// Credential provider classes accepted in fs.oss.credentials.provider.
const (
	// ProviderEnvironment reads OSS_ACCESS_KEY_ID, OSS_ACCESS_KEY_SECRET
	// and optional OSS_SESSION_TOKEN.
	ProviderEnvironment = "com.aliyun.oss.common.auth.EnvironmentVariableCredentialsProvider"
	// ProviderStatic is Hadoop's default: the fs.oss.accessKeyId,
	// fs.oss.accessKeySecret and fs.oss.securityToken keys.
	ProviderStatic = "org.apache.hadoop.fs.aliyun.oss.AliyunCredentialsProvider"
)

const pkg = "stowage/fsbackend/oss"

// Property keys read by FromProperties.
const (
	KeyBucket      = "oss.bucket"
	KeyEndpoint    = "fs.oss.endpoint"
	KeyAccessKeyID = "fs.oss.accessKeyId"
	KeySecret      = "fs.oss.accessKeySecret"
	KeyToken       = "fs.oss.securityToken"
	KeyProvider    = "fs.oss.credentials.provider"
	KeyAttempts    = "fs.oss.attempts.maximum"
	KeyNoCache     = "disable.cache"
)

// ParseBucket splits an oss.bucket value, oss://bucket[/prefix], into
// bucket and prefix.
func ParseBucket(v string) (bucket, prefix string, err error) {
	return objstore.BucketURL(pkg, KeyBucket, v, "oss")
}

// OptionsFromProperties turns SeaTunnel-style properties into Options.
// Errors name the offending key and never hold a secret value.
func OptionsFromProperties(p fsbackend.Properties) (Options, error) {
	var o Options
	if t := p.Get("storage.type", "oss"); !strings.EqualFold(t, "oss") {
		return o, fmt.Errorf("stowage/fsbackend/oss: key storage.type: %q is not oss", t)
	}
	var err error
	if o.Bucket, o.Prefix, err = ParseBucket(p.Get(KeyBucket, "")); err != nil {
		return o, err
	}
	if o.Endpoint = p.Get(KeyEndpoint, ""); o.Endpoint == "" {
		return o, fmt.Errorf("stowage/fsbackend/oss: key %s is required (for example oss-cn-hangzhou.aliyuncs.com)", KeyEndpoint)
	}
	static := Credentials{AccessKeyID: p.Get(KeyAccessKeyID, ""), AccessKeySecret: p.Get(KeySecret, ""), SecurityToken: p.Get(KeyToken, "")}
	switch prov := p.Get(KeyProvider, ""); prov {
	case ProviderEnvironment:
		var set []string
		for _, k := range []string{KeyAccessKeyID, KeySecret, KeyToken} {
			if p.Get(k, "") != "" {
				set = append(set, k)
			}
		}
		if len(set) > 0 {
			return o, fmt.Errorf("stowage/fsbackend/oss: key %s is %s, which contradicts %s: remove one",
				KeyProvider, ProviderEnvironment, strings.Join(set, ", "))
		}
		o.Credentials = Credentials{Environment: true}
	case "", ProviderStatic:
		if static.AccessKeyID == "" && static.AccessKeySecret == "" {
			return o, fmt.Errorf("stowage/fsbackend/oss: no credentials: set %s and %s, or %s: %s",
				KeyAccessKeyID, KeySecret, KeyProvider, ProviderEnvironment)
		}
		o.Credentials = static
		if err := static.validate(); err != nil {
			return o, err
		}
	default:
		return o, fmt.Errorf("stowage/fsbackend/oss: key %s: unknown credentials provider %q (known: %s, %s)",
			KeyProvider, prov, ProviderEnvironment, ProviderStatic)
	}
	if v := p.Get(KeyAttempts, ""); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return o, fmt.Errorf("stowage/fsbackend/oss: key %s: %q is not a positive integer", KeyAttempts, v)
		}
		o.Retry.MaxAttempts = n
	}
	if o.DisableCache, err = objstore.Bool(pkg, p, KeyNoCache, false); err != nil {
		return o, err
	}
	return o, nil
}

// FromProperties builds an FS from properties (see the package doc for
// the keys). It is the Opener registered as "oss".
func FromProperties(ctx context.Context, p fsbackend.Properties) (fsbackend.FS, error) {
	o, err := OptionsFromProperties(p)
	if err != nil {
		return nil, err
	}
	if ignored := objstore.UnusedKeys(p, "fs.oss.", KeyEndpoint, KeyAccessKeyID, KeySecret, KeyToken, KeyProvider, KeyAttempts); len(ignored) > 0 {
		slog.Debug("stowage/fsbackend/oss: fs.oss keys accepted but not used", slog.String("keys", strings.Join(ignored, ", ")))
	}
	slog.Debug("stowage/fsbackend/oss: opening", slog.String("properties", p.String()))
	return New(ctx, o)
}

func init() { fsbackend.Register("oss", FromProperties) }
