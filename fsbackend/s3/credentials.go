package s3

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/ec2rolecreds"
	"github.com/aws/aws-sdk-go-v2/credentials/endpointcreds"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/stowage/stowage/fsbackend/internal/objstore"
)

// ProviderKey is the property that selects how credentials are found, as
// in Hadoop S3A: one provider class, or several separated by commas that
// are tried in order.
const ProviderKey = "fs.s3a.aws.credentials.provider"

// Provider kinds. Each accepts several class names (see providerClasses).
const (
	providerSimple      = "simple"      // fs.s3a.access.key + fs.s3a.secret.key [+ fs.s3a.session.token]
	providerTemporary   = "temporary"   // the same, session token required
	providerAnonymous   = "anonymous"   // no signature
	providerEnvironment = "environment" // AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY [, AWS_SESSION_TOKEN]
	providerDefault     = "default"     // the SDK's default chain
	providerInstance    = "instance"    // EC2 instance profile through IMDS
	providerContainer   = "container"   // ECS task role through the container endpoint
	providerContainerOr = "container-or-instance"
	providerWebIdentity = "web-identity" // AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN (EKS IRSA)
)

// providerClasses maps the provider class names users write (AWS SDK v1,
// AWS SDK v2 and Hadoop S3A spellings) to what this back end does for them.
var providerClasses = map[string]string{
	"org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider":                           providerSimple,
	"org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider":                        providerTemporary,
	"org.apache.hadoop.fs.s3a.AnonymousAWSCredentialsProvider":                        providerAnonymous,
	"com.amazonaws.auth.EnvironmentVariableCredentialsProvider":                       providerEnvironment,
	"org.apache.hadoop.fs.s3a.EnvironmentVariableCredentialsProvider":                 providerEnvironment,
	"software.amazon.awssdk.auth.credentials.EnvironmentVariableCredentialsProvider":  providerEnvironment,
	"com.amazonaws.auth.DefaultAWSCredentialsProviderChain":                           providerDefault,
	"software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider":              providerDefault,
	"com.amazonaws.auth.InstanceProfileCredentialsProvider":                           providerInstance,
	"org.apache.hadoop.fs.s3a.auth.IAMInstanceCredentialsProvider":                    providerInstance,
	"org.apache.hadoop.fs.s3a.SharedInstanceProfileCredentialsProvider":               providerInstance,
	"software.amazon.awssdk.auth.credentials.InstanceProfileCredentialsProvider":      providerInstance,
	"com.amazonaws.auth.ContainerCredentialsProvider":                                 providerContainer,
	"software.amazon.awssdk.auth.credentials.ContainerCredentialsProvider":            providerContainer,
	"com.amazonaws.auth.EC2ContainerCredentialsProviderWrapper":                       providerContainerOr,
	"com.amazonaws.auth.WebIdentityTokenCredentialsProvider":                          providerWebIdentity,
	"org.apache.hadoop.fs.s3a.auth.WebIdentityTokenCredentialsProvider":               providerWebIdentity,
	"software.amazon.awssdk.auth.credentials.WebIdentityTokenFileCredentialsProvider": providerWebIdentity,
}

// KnownProviders lists the accepted values of fs.s3a.aws.credentials.provider, sorted.
func KnownProviders() []string {
	return slices.Sorted(maps.Keys(providerClasses))
}

// credConfig is what building credentials needs from the properties.
type credConfig struct {
	providers                     []string // class names, in order
	accessKey, secretKey, sessTok string
	region                        string
	getenv                        func(string) string
}

// buildCredentials returns the provider the configuration selects (nil for
// anonymous access) and a non-secret identity of it for the client cache.
func buildCredentials(ctx context.Context, c credConfig) (aws.CredentialsProvider, string, error) {
	if c.getenv == nil {
		c.getenv = os.Getenv
	}
	classes := c.providers
	if len(classes) == 0 {
		// Hadoop's default list: static keys if given, else the default chain
		// (environment, shared files, web identity, container, instance).
		if c.accessKey != "" || c.secretKey != "" {
			classes = []string{"org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"}
		} else {
			classes = []string{"com.amazonaws.auth.DefaultAWSCredentialsProviderChain"}
		}
	}
	var (
		chain []aws.CredentialsProvider
		ids   []string
		errs  []error
	)
	for _, class := range classes {
		kind, ok := providerClasses[class]
		if !ok {
			return nil, "", fmt.Errorf("stowage/fsbackend/s3: key %s: unknown provider class %q (known: %s)", ProviderKey, class, strings.Join(KnownProviders(), ", "))
		}
		p, id, err := buildOne(ctx, kind, class, c)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if p == nil { // anonymous ends the chain, as in Hadoop
			if len(chain) == 0 {
				return nil, "anonymous", nil
			}
			break
		}
		chain = append(chain, p)
		ids = append(ids, id)
	}
	if len(chain) == 0 {
		return nil, "", errors.Join(errs...)
	}
	id := strings.Join(ids, ",")
	if len(chain) == 1 {
		return aws.NewCredentialsCache(chain[0]), id, nil
	}
	return aws.NewCredentialsCache(chainProvider(chain)), id, nil
}

func buildOne(ctx context.Context, kind, class string, c credConfig) (aws.CredentialsProvider, string, error) {
	switch kind {
	case providerSimple, providerTemporary:
		var missing []string
		if c.accessKey == "" {
			missing = append(missing, "fs.s3a.access.key")
		}
		if c.secretKey == "" {
			missing = append(missing, "fs.s3a.secret.key")
		}
		if kind == providerTemporary && c.sessTok == "" {
			missing = append(missing, "fs.s3a.session.token")
		}
		if len(missing) > 0 {
			return nil, "", fmt.Errorf("stowage/fsbackend/s3: key %s: %s needs %s, which %s not set", ProviderKey, class, strings.Join(missing, " and "), isAre(len(missing)))
		}
		return credentials.NewStaticCredentialsProvider(c.accessKey, c.secretKey, c.sessTok), "static:" + objstore.SecretHash(c.accessKey, c.secretKey, c.sessTok), nil
	case providerAnonymous:
		return nil, "anonymous", nil
	case providerEnvironment:
		id := firstEnv(c.getenv, "AWS_ACCESS_KEY_ID", "AWS_ACCESS_KEY")
		secret := firstEnv(c.getenv, "AWS_SECRET_ACCESS_KEY", "AWS_SECRET_KEY")
		tok := c.getenv("AWS_SESSION_TOKEN")
		var missing []string
		if id == "" {
			missing = append(missing, "AWS_ACCESS_KEY_ID")
		}
		if secret == "" {
			missing = append(missing, "AWS_SECRET_ACCESS_KEY")
		}
		if len(missing) > 0 {
			return nil, "", fmt.Errorf("stowage/fsbackend/s3: key %s: %s needs the environment variables AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (optional AWS_SESSION_TOKEN); not set: %s", ProviderKey, class, strings.Join(missing, ", "))
		}
		return credentials.NewStaticCredentialsProvider(id, secret, tok), "env:" + objstore.SecretHash(id, secret, tok), nil
	case providerDefault:
		cfg, err := config.LoadDefaultConfig(ctx, config.WithRegion(c.region))
		if err != nil {
			return nil, "", fmt.Errorf("stowage/fsbackend/s3: key %s: %s: %w", ProviderKey, class, err)
		}
		if cfg.Credentials == nil {
			return nil, "", fmt.Errorf("stowage/fsbackend/s3: key %s: %s found no credentials source", ProviderKey, class)
		}
		return cfg.Credentials, "default", nil
	case providerInstance:
		return ec2rolecreds.New(), "instance", nil
	case providerContainer, providerContainerOr:
		p, err := containerProvider(c.getenv)
		if err != nil {
			if kind == providerContainerOr {
				return ec2rolecreds.New(), "instance", nil
			}
			return nil, "", fmt.Errorf("stowage/fsbackend/s3: key %s: %s: %w", ProviderKey, class, err)
		}
		if kind == providerContainerOr {
			return chainProvider{p, ec2rolecreds.New()}, "container,instance", nil
		}
		return p, "container", nil
	case providerWebIdentity:
		tokenFile := c.getenv("AWS_WEB_IDENTITY_TOKEN_FILE")
		role := c.getenv("AWS_ROLE_ARN")
		var missing []string
		if tokenFile == "" {
			missing = append(missing, "AWS_WEB_IDENTITY_TOKEN_FILE")
		}
		if role == "" {
			missing = append(missing, "AWS_ROLE_ARN")
		}
		if len(missing) > 0 {
			return nil, "", fmt.Errorf("stowage/fsbackend/s3: key %s: %s needs the environment variables AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN; not set: %s", ProviderKey, class, strings.Join(missing, ", "))
		}
		region := c.region
		if r := firstEnv(c.getenv, "AWS_REGION", "AWS_DEFAULT_REGION"); r != "" {
			region = r
		}
		// The STS client comes from the SDK's own configuration, so that
		// AWS_ENDPOINT_URL_STS (or AWS_ENDPOINT_URL, or the endpoint_url of
		// the shared config file) can name a regional, VPC or test STS
		// endpoint. AssumeRoleWithWebIdentity is unsigned: no credentials
		// are needed to call it.
		stsCfg, err := config.LoadDefaultConfig(ctx, config.WithRegion(region))
		if err != nil {
			return nil, "", fmt.Errorf("stowage/fsbackend/s3: key %s: %s: STS client: %w", ProviderKey, class, err)
		}
		stsClient := sts.NewFromConfig(stsCfg)
		session := c.getenv("AWS_ROLE_SESSION_NAME")
		p := stscreds.NewWebIdentityRoleProvider(stsClient, role, stscreds.IdentityTokenFile(tokenFile), func(o *stscreds.WebIdentityRoleOptions) {
			if session != "" {
				o.RoleSessionName = session
			}
		})
		return p, "web-identity:" + role, nil
	}
	return nil, "", fmt.Errorf("stowage/fsbackend/s3: key %s: provider %q not implemented", ProviderKey, class)
}

// containerProvider reads the ECS container credentials endpoint from the
// environment, as the AWS SDKs do.
func containerProvider(getenv func(string) string) (aws.CredentialsProvider, error) {
	endpoint := getenv("AWS_CONTAINER_CREDENTIALS_FULL_URI")
	if rel := getenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"); endpoint == "" && rel != "" {
		endpoint = "http://169.254.170.2" + rel
	}
	if endpoint == "" {
		return nil, errors.New("needs the environment variable AWS_CONTAINER_CREDENTIALS_RELATIVE_URI or AWS_CONTAINER_CREDENTIALS_FULL_URI")
	}
	token := getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN")
	tokenFile := getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE")
	return endpointcreds.New(endpoint, func(o *endpointcreds.Options) {
		switch {
		case tokenFile != "":
			o.AuthorizationTokenProvider = endpointcreds.TokenProviderFunc(func() (string, error) {
				b, err := os.ReadFile(tokenFile)
				if err != nil {
					return "", fmt.Errorf("read AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE: %w", err)
				}
				return strings.TrimSpace(string(b)), nil
			})
		case token != "":
			o.AuthorizationToken = token
		}
	}), nil
}

// chainProvider tries each provider in order and returns the first
// credentials found, like Hadoop's AWSCredentialProviderList.
type chainProvider []aws.CredentialsProvider

func (c chainProvider) Retrieve(ctx context.Context) (aws.Credentials, error) {
	var errs []error
	for _, p := range c {
		cr, err := p.Retrieve(ctx)
		if err == nil {
			return cr, nil
		}
		errs = append(errs, err)
	}
	return aws.Credentials{}, fmt.Errorf("stowage/fsbackend/s3: no credential provider in %s gave credentials: %w", ProviderKey, errors.Join(errs...))
}

func firstEnv(getenv func(string) string, names ...string) string {
	for _, n := range names {
		if v := strings.TrimSpace(getenv(n)); v != "" {
			return v
		}
	}
	return ""
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}
