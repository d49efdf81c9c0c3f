package s3

import (
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	lru "github.com/hashicorp/golang-lru/v2"
)

// client is one SDK client with the HTTP transport it owns. Shared
// clients live in the cache; refs counts the open FSs using one.
type client struct {
	api       *s3.Client
	transport *http.Transport
	refs      int  // guarded by cacheMu
	evicted   bool // guarded by cacheMu
}

type cacheKey struct {
	scheme, endpoint, region, bucket, credentials string
	pathStyle, checksumWhenRequired               bool
}

const cacheSize = 64

var (
	cacheMu sync.Mutex
	cache   *lru.Cache[cacheKey, *client]
)

func init() {
	var err error
	cache, err = lru.NewWithEvict[cacheKey, *client](cacheSize, func(_ cacheKey, c *client) {
		// Called with cacheMu held (every cache call is under it).
		c.evicted = true
		if c.refs == 0 {
			c.transport.CloseIdleConnections()
		}
	})
	if err != nil {
		panic(err)
	}
}

// acquire returns the client for o, shared through the cache unless the
// cache is disabled or o has no CredentialsID. release must be called
// once per acquire.
func acquire(o *Options) *client {
	if o.DisableCache || o.CredentialsID == "" {
		c := newClient(o)
		c.refs = 1
		c.evicted = true // not in the cache: release closes it
		return c
	}
	k := cacheKey{o.Scheme, o.Endpoint, o.Region, o.Bucket, o.CredentialsID, o.PathStyle, o.ChecksumWhenRequired}
	cacheMu.Lock()
	defer cacheMu.Unlock()
	c, ok := cache.Get(k)
	if !ok {
		c = newClient(o)
		cache.Add(k, c)
	}
	c.refs++
	return c
}

func release(c *client) {
	cacheMu.Lock()
	defer cacheMu.Unlock()
	c.refs--
	if c.refs == 0 {
		// Idle connections hold goroutines; drop them. A cached client
		// opens new ones when it is used again.
		c.transport.CloseIdleConnections()
	}
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
	opts := s3.Options{
		Region:       o.Region,
		Credentials:  o.Credentials,
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
	return &client{api: s3.New(opts), transport: tr}
}
