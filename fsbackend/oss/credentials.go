package oss

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	alioss "github.com/aliyun/aliyun-oss-go-sdk/oss"

	"github.com/stowage/stowage/fsbackend/internal/objstore"
)

// Environment variables read by the environment credentials provider.
const (
	EnvAccessKeyID     = "OSS_ACCESS_KEY_ID"
	EnvAccessKeySecret = "OSS_ACCESS_KEY_SECRET"
	EnvSessionToken    = "OSS_SESSION_TOKEN"
)

// Credentials say how requests are signed: static keys, or (Environment)
// the OSS_* environment variables, read when the FS is made. Printing a
// Credentials with %v, %+v or %#v shows none of its values: like the s3
// and cos back ends, this one treats the access key id as a secret too.
type Credentials struct {
	AccessKeyID     string
	AccessKeySecret string
	SecurityToken   string // optional, for temporary STS credentials
	// Environment reads OSS_ACCESS_KEY_ID, OSS_ACCESS_KEY_SECRET and the
	// optional OSS_SESSION_TOKEN instead of the fields above.
	Environment bool
}

// String implements fmt.Stringer without the secret parts.
func (c Credentials) String() string {
	if c.Environment {
		return "oss credentials from environment"
	}
	if c.SecurityToken != "" {
		return "oss static credentials with a security token"
	}
	return "oss static credentials"
}

// GoString implements fmt.GoStringer without the secret parts.
func (c Credentials) GoString() string { return c.String() }

func (c Credentials) kind() string {
	if c.Environment {
		return "environment"
	}
	return "static"
}

func (c Credentials) validate() error {
	if c.Environment {
		if c.AccessKeyID != "" || c.AccessKeySecret != "" || c.SecurityToken != "" {
			return errors.New("stowage/fsbackend/oss: environment credentials and static keys are both set")
		}
		return nil
	}
	var missing []string
	if c.AccessKeyID == "" {
		missing = append(missing, "fs.oss.accessKeyId")
	}
	if c.AccessKeySecret == "" {
		missing = append(missing, "fs.oss.accessKeySecret")
	}
	if len(missing) > 0 {
		return fmt.Errorf("stowage/fsbackend/oss: static credentials need %s (or set fs.oss.credentials.provider to %s)",
			strings.Join(missing, " and "), ProviderEnvironment)
	}
	return nil
}

// resolve returns the static values to sign with, reading the environment
// if asked to. Missing variables give an error naming them.
func (c Credentials) resolve() (Credentials, error) {
	if !c.Environment {
		return c, nil
	}
	var missing []string
	for _, v := range []string{EnvAccessKeyID, EnvAccessKeySecret} {
		if strings.TrimSpace(os.Getenv(v)) == "" {
			missing = append(missing, v)
		}
	}
	if len(missing) > 0 {
		return Credentials{}, fmt.Errorf("stowage/fsbackend/oss: fs.oss.credentials.provider %s: environment variable %s not set",
			ProviderEnvironment, strings.Join(missing, " and "))
	}
	return Credentials{
		AccessKeyID: os.Getenv(EnvAccessKeyID), AccessKeySecret: os.Getenv(EnvAccessKeySecret),
		SecurityToken: os.Getenv(EnvSessionToken), Environment: true,
	}, nil
}

type cachedClient struct {
	client    *alioss.Client
	transport *http.Transport
}

func (c *cachedClient) closeIdle() { c.transport.CloseIdleConnections() }

// clients are shared by the FSs of one endpoint and credentials (32 such
// pairs at most), keyed without a secret in clear.
var clients = objstore.NewClients[string](32, nil, (*cachedClient).closeIdle)

// PurgeClientCache drops every shared client and closes its idle
// connections, for example after credentials were rotated. FS values that
// use a purged client keep working; new ones get a fresh client.
func PurgeClientCache() { clients.Purge() }

// getClient returns a client for endpoint and credentials, shared through
// the cache unless noCache. release must be called when the FS closes.
// It also returns a Redactor of the credential values the client signs
// with: OSS quotes the access key id in some answers (OSSAccessKeyId, the
// string to sign), so no error or log line may show any of them.
func getClient(endpoint string, creds Credentials, noCache bool) (*alioss.Client, func(), objstore.Redactor, error) {
	rc, err := creds.resolve()
	if err != nil {
		return nil, nil, nil, err
	}
	red := objstore.NewRedactor(rc.AccessKeyID, rc.AccessKeySecret, rc.SecurityToken)
	if noCache {
		c, err := newClient(endpoint, rc)
		if err != nil {
			return nil, nil, nil, red.Wrap(err)
		}
		return c.client, c.closeIdle, red, nil
	}
	key := endpoint + "\x00" + rc.kind() + "\x00" + objstore.SecretHash(rc.AccessKeyID, rc.AccessKeySecret, rc.SecurityToken)
	c, release, err := clients.Acquire(key, func() (*cachedClient, error) { return newClient(endpoint, rc) })
	if err != nil {
		return nil, nil, nil, red.Wrap(err)
	}
	return c.client, release, red, nil
}

func newClient(endpoint string, c Credentials) (*cachedClient, error) {
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   100,
		IdleConnTimeout:       50 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 60 * time.Second,
	}
	opts := []alioss.ClientOption{alioss.HTTPClient(&http.Client{Transport: tr})}
	id, secret := c.AccessKeyID, c.AccessKeySecret
	if c.Environment {
		p, err := alioss.NewEnvironmentVariableCredentialsProvider()
		if err != nil {
			// Checked by resolve already; the SDK's message holds no secret.
			return nil, fmt.Errorf("stowage/fsbackend/oss: environment credentials: %w", err)
		}
		opts = append(opts, alioss.SetCredentialsProvider(&p))
		id, secret = "", ""
	} else if c.SecurityToken != "" {
		opts = append(opts, alioss.SecurityToken(c.SecurityToken))
	}
	client, err := alioss.New(endpoint, id, secret, opts...)
	if err != nil {
		return nil, fmt.Errorf("stowage/fsbackend/oss: key fs.oss.endpoint: %q: %w", endpoint, err)
	}
	return &cachedClient{client: client, transport: tr}, nil
}
