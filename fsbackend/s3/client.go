package s3

import (
	"context"
	"net"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/stowage/stowage/fsbackend/internal/objstore"
)

// client is one SDK client with the HTTP transport it owns.
type client struct {
	api       *s3.Client
	transport *http.Transport
	// secrets are the credential values the client signed with, scrubbed
	// from every error and log line: some servers quote the key id, or
	// even the session token, back in their error messages.
	secrets *objstore.Learned
}

// learningProvider tells secrets every credential its provider hands out.
type learningProvider struct {
	p       aws.CredentialsProvider
	secrets *objstore.Learned
}

func (l learningProvider) Retrieve(ctx context.Context) (aws.Credentials, error) {
	c, err := l.p.Retrieve(ctx)
	if err == nil {
		l.secrets.Add(c.AccessKeyID, c.SecretAccessKey, c.SessionToken)
	}
	return c, err
}

type cacheKey struct {
	scheme, endpoint, region, bucket, credentials string
	pathStyle, checksumWhenRequired               bool
}

// clients are shared by the FSs whose options match. Idle connections
// hold goroutines: they are dropped when a client's last FS closes (a
// cached client opens new ones when it is used again).
var clients = objstore.NewClients[cacheKey](64, (*client).closeIdle, (*client).closeIdle)

func (c *client) closeIdle() { c.transport.CloseIdleConnections() }

// acquire returns the client for o, shared through the cache unless the
// cache is disabled or o has no CredentialsID, and the function that
// releases it.
func acquire(o *Options) (*client, func()) {
	if o.DisableCache || o.CredentialsID == "" {
		c := newClient(o)
		return c, c.closeIdle
	}
	k := cacheKey{o.Scheme, o.Endpoint, o.Region, o.Bucket, o.CredentialsID, o.PathStyle, o.ChecksumWhenRequired}
	c, release, _ := clients.Acquire(k, func() (*client, error) { return newClient(o), nil })
	return c, release
}

func newClient(o *Options) *client {
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		ResponseHeaderTimeout: 60 * time.Second,
	}
	secrets := &objstore.Learned{}
	var creds aws.CredentialsProvider
	if o.Credentials != nil {
		creds = learningProvider{p: o.Credentials, secrets: secrets}
	}
	opts := s3.Options{
		Region:       o.Region,
		Credentials:  creds,
		UsePathStyle: o.PathStyle,
		HTTPClient:   &http.Client{Transport: tr},
		// Retries are ours (objstore.Retry), with an overall deadline.
		Retryer: aws.NopRetryer{},
	}
	if o.Endpoint != "" {
		opts.BaseEndpoint = aws.String(o.Endpoint)
	}
	if o.ChecksumWhenRequired {
		opts.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		opts.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	}
	return &client{api: s3.New(opts), transport: tr, secrets: secrets}
}
