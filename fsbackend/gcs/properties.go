package gcs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"cloud.google.com/go/storage"
	"google.golang.org/api/option"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/internal/objstore"
)

const pkg = "stowage/fsbackend/gcs"

// Property keys read by FromProperties.
const (
	KeyBucket   = "gcs.bucket"
	KeyProject  = "fs.gs.project.id"
	KeyKeyFile  = "fs.gs.auth.service.account.json.keyfile"
	KeyMove     = "fs.gs.operation.move.enable"
	KeyRootURL  = "fs.gs.storage.root.url"
	KeyAuthType = "fs.gs.auth.type"
	KeyNoCache  = "disable.cache"
	// KeyRequesterPays is DISABLED (the default) or ENABLED: every
	// request then names a project to bill (userProject), as a
	// requester-pays bucket demands. KeyRequesterPaysProject names it,
	// fs.gs.project.id when unset.
	KeyRequesterPays        = "fs.gs.requester.pays.mode"
	KeyRequesterPaysProject = "fs.gs.requester.pays.project.id"
)

// EnvEmulatorHost is the environment variable that points the client at
// an emulator (host:port or a URL), without authentication.
const EnvEmulatorHost = "STORAGE_EMULATOR_HOST"

// EnvCredentials names the Application Default Credentials key file.
const EnvCredentials = "GOOGLE_APPLICATION_CREDENTIALS"

// ParseBucket splits a gcs.bucket value, gs://bucket[/prefix].
func ParseBucket(v string) (bucket, prefix string, err error) {
	return objstore.BucketURL(pkg, KeyBucket, v, "gs")
}

// config is what properties say, before a client is built.
type config struct {
	bucket, prefix, project string
	userProject             string // billed project of requester-pays requests, or ""
	keyFile, keyType        string
	rootURL                 string
	unauthenticated         bool
	useMove, noCache        bool
}

func parse(p fsbackend.Properties) (config, error) {
	var c config
	if t := p.Get("storage.type", "gcs"); !strings.EqualFold(t, "gcs") {
		return c, fmt.Errorf("stowage/fsbackend/gcs: key storage.type: %q is not gcs", t)
	}
	var err error
	if c.bucket, c.prefix, err = ParseBucket(p.Get(KeyBucket, "")); err != nil {
		return c, err
	}
	// fs.gs.project.id is what the Hadoop connector needs to list and
	// create buckets, which stowage never does; here it is the project
	// billed for requests to a requester-pays bucket, and otherwise
	// accepted and unused.
	c.project = p.Get(KeyProject, "")
	switch m := p.Get(KeyRequesterPays, "DISABLED"); strings.ToUpper(m) {
	case "DISABLED":
	case "ENABLED":
		if c.userProject = p.Get(KeyRequesterPaysProject, c.project); c.userProject == "" {
			return c, fmt.Errorf("stowage/fsbackend/gcs: key %s is ENABLED, which needs a project to bill: set %s or %s", KeyRequesterPays, KeyRequesterPaysProject, KeyProject)
		}
	default:
		return c, fmt.Errorf("stowage/fsbackend/gcs: key %s: %q is not supported (known: DISABLED, ENABLED)", KeyRequesterPays, m)
	}
	if c.keyFile = p.Get(KeyKeyFile, ""); c.keyFile != "" {
		if c.keyType, err = keyFileType("key "+KeyKeyFile, c.keyFile); err != nil {
			return c, err
		}
	}
	c.rootURL = p.Get(KeyRootURL, "")
	if adc := os.Getenv(EnvCredentials); adc != "" && c.keyFile == "" && os.Getenv(EnvEmulatorHost) == "" {
		// Application Default Credentials from a file: check it here so
		// the error names the variable.
		if _, err := keyFileType("environment variable "+EnvCredentials, adc); err != nil {
			return c, err
		}
	}
	switch at := p.Get(KeyAuthType, ""); strings.ToUpper(at) {
	case "", "APPLICATION_DEFAULT", "SERVICE_ACCOUNT_JSON_KEYFILE":
	case "UNAUTHENTICATED":
		if c.keyFile != "" {
			return c, fmt.Errorf("stowage/fsbackend/gcs: key %s is UNAUTHENTICATED, which contradicts %s", KeyAuthType, KeyKeyFile)
		}
		c.unauthenticated = true
	default:
		return c, fmt.Errorf("stowage/fsbackend/gcs: key %s: unknown value %q (known: APPLICATION_DEFAULT, SERVICE_ACCOUNT_JSON_KEYFILE, UNAUTHENTICATED)", KeyAuthType, at)
	}
	if c.useMove, err = objstore.Bool(pkg, p, KeyMove, false); err != nil {
		return c, err
	}
	if c.noCache, err = objstore.Bool(pkg, p, KeyNoCache, false); err != nil {
		return c, err
	}
	return c, nil
}

// keyFileType reads the key file's "type" field. Errors name the key and
// the path, never the file's contents.
func keyFileType(what, path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("stowage/fsbackend/gcs: %s: cannot read the key file: %w", what, err)
	}
	var head struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(data, &head) != nil {
		return "", fmt.Errorf("stowage/fsbackend/gcs: %s: %s is not a JSON credentials file", what, path)
	}
	switch head.Type {
	case string(option.ServiceAccount), string(option.AuthorizedUser), string(option.ExternalAccount), string(option.ImpersonatedServiceAccount):
		return head.Type, nil
	}
	return "", fmt.Errorf("stowage/fsbackend/gcs: %s: %s has credentials type %q (want service_account, authorized_user, external_account or impersonated_service_account)",
		what, path, head.Type)
}

func (c config) clientOptions() []option.ClientOption {
	var opts []option.ClientOption
	if c.keyFile != "" {
		opts = append(opts, option.WithAuthCredentialsFile(option.CredentialsType(c.keyType), c.keyFile))
	}
	if c.rootURL != "" {
		opts = append(opts, option.WithEndpoint(strings.TrimSuffix(c.rootURL, "/")+"/storage/v1/"))
	}
	if c.unauthenticated {
		opts = append(opts, option.WithoutAuthentication())
	}
	if c.rootURL != "" || os.Getenv(EnvEmulatorHost) != "" {
		opts = append(opts, storage.WithJSONReads())
	}
	return opts
}

// cacheKey identifies a client by what configures it (the key file by
// path, never by contents).
func (c config) cacheKey() string {
	return strings.Join([]string{c.keyFile, c.rootURL, strconv.FormatBool(c.unauthenticated), os.Getenv(EnvEmulatorHost),
		os.Getenv(EnvCredentials)}, "\x00")
}

// FromProperties builds an FS from properties (see the package doc). It
// is the Opener registered as "gcs".
func FromProperties(ctx context.Context, p fsbackend.Properties) (fsbackend.FS, error) {
	c, err := parse(p)
	if err != nil {
		return nil, err
	}
	slog.Debug("stowage/fsbackend/gcs: opening", slog.String("properties", p.String()))
	if ig := objstore.UnusedKeys(p, "fs.gs.", usedKeys...); len(ig) > 0 {
		slog.Debug("stowage/fsbackend/gcs: fs.gs keys accepted but not used", slog.String("keys", strings.Join(ig, ", ")))
	}
	opts := Options{Bucket: c.bucket, Prefix: c.prefix, UseMove: c.useMove, UserProject: c.userProject}
	if c.noCache {
		opts.ClientOptions = c.clientOptions()
		f, err := New(ctx, opts)
		if err != nil {
			return nil, c.clientError(err)
		}
		return f, nil
	}
	client, release, err := sharedClient(ctx, c)
	if err != nil {
		return nil, c.clientError(err)
	}
	f, err := newFS(client, release, opts) // releases the client when it fails
	if err != nil {
		return nil, err
	}
	return f, nil
}

// ErrNoCredentials is matched by the error of opening an FS when no
// credentials are configured (no key file, fs.gs.auth.type not
// UNAUTHENTICATED, no STORAGE_EMULATOR_HOST) and Application Default
// Credentials found none either.
var ErrNoCredentials = errors.New("stowage/fsbackend/gcs: no credentials")

// clientError explains a failure to build a client. When nothing named
// credentials, the client library fell through to Application Default
// Credentials (GOOGLE_APPLICATION_CREDENTIALS, gcloud's ADC file, the
// metadata server); if that found nothing, the error says what to set.
func (c config) clientError(err error) error {
	explicit := c.keyFile != "" || c.unauthenticated || os.Getenv(EnvEmulatorHost) != "" || os.Getenv(EnvCredentials) != ""
	if explicit || !strings.Contains(err.Error(), "could not find default credentials") {
		return err
	}
	return fmt.Errorf("%w: %s is not set and Application Default Credentials found none (%s, gcloud's application_default_credentials.json, the metadata server of GCE or GKE workload identity); set one of them, or %s: UNAUTHENTICATED or %s for an emulator: %w",
		ErrNoCredentials, KeyKeyFile, EnvCredentials, KeyAuthType, EnvEmulatorHost, err)
}

var usedKeys = []string{KeyProject, KeyKeyFile, KeyMove, KeyRootURL, KeyAuthType, KeyRequesterPays, KeyRequesterPaysProject}

// clients are shared by the FSs of one configuration (16 at most); a
// client is closed once it left the cache and its last FS closed.
var clients = objstore.NewClients[string](16, nil, func(c *storage.Client) { c.Close() })

func sharedClient(ctx context.Context, c config) (*storage.Client, func() error, error) {
	client, release, err := clients.Acquire(c.cacheKey(), func() (*storage.Client, error) {
		client, err := storage.NewClient(ctx, c.clientOptions()...)
		if err != nil {
			return nil, fmt.Errorf("stowage/fsbackend/gcs: client: %w", err)
		}
		return client, nil
	})
	if err != nil {
		return nil, nil, err
	}
	return client, func() error { release(); return nil }, nil
}

// PurgeClientCache closes every shared client no FS uses any more and
// forgets the others, which close when their last FS closes.
func PurgeClientCache() { clients.Purge() }

func init() { fsbackend.Register("gcs", FromProperties) }
