package objstore

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stowage/stowage/fsbackend"
)

// Property helpers. pkg is the error prefix of the calling back end, such
// as "stowage/fsbackend/s3"; every error names the offending key and
// quotes only values that are not secret.

// BucketURL splits a bucket URL scheme://bucket[/prefix] (s3a://b/p,
// cosn://b-125000/p, oss://b, gs://b) into bucket and key prefix, accepting
// only the given schemes (case-insensitive). The prefix has no leading or
// trailing slash and must be a valid fsbackend name.
func BucketURL(pkg, key, v string, schemes ...string) (bucket, prefix string, err error) {
	forms := make([]string, len(schemes))
	for i, s := range schemes {
		forms[i] = s + "://"
	}
	if v == "" {
		return "", "", fmt.Errorf("%s: key %s is required (%sbucket[/prefix])", pkg, key, forms[0])
	}
	u, perr := url.Parse(v)
	ok := false
	if perr == nil && u.Host != "" && u.User == nil && u.RawQuery == "" && u.Fragment == "" {
		for _, s := range schemes {
			if strings.EqualFold(u.Scheme, s) {
				ok = true
			}
		}
	}
	if !ok {
		return "", "", fmt.Errorf("%s: key %s: %q is not a bucket URL %sbucket[/prefix] (accepted schemes: %s)", pkg, key, v, forms[0], strings.Join(forms, ", "))
	}
	prefix = strings.Trim(u.Path, "/")
	if prefix != "" {
		if err := fsbackend.ValidName(prefix); err != nil {
			return "", "", fmt.Errorf("%s: key %s: prefix of %q: %w", pkg, key, v, err)
		}
	}
	return u.Host, prefix, nil
}

// Bool reads a true/false property, def when unset.
func Bool(pkg string, p fsbackend.Properties, key string, def bool) (bool, error) {
	v := p.Get(key, "")
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s: key %s: %q is not true or false", pkg, key, v)
	}
	return b, nil
}

// Endpoint normalizes an endpoint property: a bare host[:port] gets
// https:// (http:// when ssl is false); the result has no trailing slash.
// An empty value stays empty.
func Endpoint(pkg, key, v string, ssl bool) (string, error) {
	if v == "" {
		return "", nil
	}
	if !strings.Contains(v, "://") {
		if ssl {
			v = "https://" + v
		} else {
			v = "http://" + v
		}
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%s: key %s: %q is not an http(s) endpoint", pkg, key, v)
	}
	return strings.TrimRight(v, "/"), nil
}

// RetryFromProperties starts from DefaultRetryPolicy and applies a retry
// count (limitKey, retries after the first attempt) and a first backoff
// interval (intervalKey, a Go duration such as 500ms), where set.
func RetryFromProperties(pkg string, p fsbackend.Properties, limitKey, intervalKey string) (RetryPolicy, error) {
	r := DefaultRetryPolicy()
	if v := p.Get(limitKey, ""); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return r, fmt.Errorf("%s: key %s: %q is not a non-negative number of retries", pkg, limitKey, v)
		}
		r.MaxAttempts = n + 1
	}
	if v := p.Get(intervalKey, ""); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return r, fmt.Errorf("%s: key %s: %q is not a positive duration such as 500ms", pkg, intervalKey, v)
		}
		r.Initial = d
		if r.Max < d {
			r.Max = d
		}
	}
	return r, nil
}

// SecretHash is a short one-way identity of a credential set, for client
// cache keys: equal inputs give equal hashes, and the hash reveals nothing
// usable of the secrets.
func SecretHash(parts ...string) string {
	h := sha256.New()
	for _, s := range parts {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// List reads a comma-separated property (such as a list of credential
// provider classes): the values trimmed, the empty ones dropped.
func List(p fsbackend.Properties, key string) []string {
	var out []string
	for _, v := range strings.Split(p.Get(key, ""), ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// UnusedKeys returns, sorted, the keys of p that start with prefix and are
// not among used: Hadoop settings a back end accepts and ignores.
func UnusedKeys(p fsbackend.Properties, prefix string, used ...string) []string {
	var out []string
	for k := range p {
		if strings.HasPrefix(k, prefix) && !slices.Contains(used, k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
