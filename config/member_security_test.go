package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stowage/stowage/config"
)

func hzSSL(props string) []byte {
	return []byte("hazelcast:\n  network:\n    ssl:\n      enabled: true\n      properties:\n" + props)
}

func TestMemberSSLPKI(t *testing.T) {
	c, err := config.Parse(nil, hzSSL("        keyCertChainFile: m.pem\n        keyFile: m-key.pem\n        trustCertCollectionFile: ca.pem\n        allowed-sans: a.test, b.test\n        protocol: TLSv1.3\n        mutualAuthentication: REQUIRED\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := c.Hazelcast.Network.SSL
	if !s.Enabled || s.CertFile != "m.pem" || s.KeyFile != "m-key.pem" || s.CAFile != "ca.pem" || strings.Join(s.AllowedSANs, "|") != "a.test|b.test" || !s.PKI() {
		t.Fatalf("read %+v", s)
	}
	dump := c.String()
	for _, w := range []string{"keyCertChainFile: m.pem", "trustCertCollectionFile: ca.pem", "allowed-sans: a.test,b.test"} {
		if !strings.Contains(dump, w) {
			t.Errorf("dump lacks %q:\n%s", w, dump)
		}
	}
	again, err := config.Parse(nil, []byte(dump[strings.Index(dump, "hazelcast:"):]))
	if err != nil {
		t.Fatalf("the dump does not parse back: %v", err)
	}
	if again.Hazelcast.Network.SSL.CAFile != "ca.pem" {
		t.Errorf("parsed back %+v", again.Hazelcast.Network.SSL)
	}
}

func TestMemberSSLRefused(t *testing.T) {
	for _, tc := range []struct {
		props, key string
		kind       error
	}{
		{"        keyFile: k.pem\n", "hazelcast.network.ssl.properties", config.ErrInvalid},
		{"        keyStore: ks.p12\n", "hazelcast.network.ssl.properties.keyStore", config.ErrUnsupported},
		{"        trustStorePassword: hunter2-secret\n", "hazelcast.network.ssl.properties.trustStorePassword", config.ErrUnsupported},
		{"        keyFilePassword: hunter2-secret\n", "hazelcast.network.ssl.properties.keyFilePassword", config.ErrUnsupported},
		{"        protocol: TLSv1.2\n", "hazelcast.network.ssl.properties.protocol", config.ErrUnsupported},
		{"        mutualAuthentication: OPTIONAL\n", "hazelcast.network.ssl.properties.mutualAuthentication", config.ErrUnsupported},
		{"        allowed-sans: a.test\n", "hazelcast.network.ssl.properties.allowed-sans", config.ErrInvalid},
		{"        keyFiel: k.pem\n", "hazelcast.network.ssl.properties.keyFiel", config.ErrUnknownKey},
	} {
		_, err := config.Parse(nil, hzSSL(tc.props))
		if !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.key+":") {
			t.Errorf("%q: %v, want %v naming %s", tc.props, err, tc.kind, tc.key)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("the error shows a secret: %v", err)
		}
	}
}

func TestMemberSSLSecret(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "cluster.secret")
	if err := os.WriteFile(f, []byte("  0123456789abcdef-secret-in-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(config.ClusterSecretEnv, "0123456789abcdef-secret-in-env")
	got, err := config.MemberSSL{Enabled: true, SecretFile: f}.Secret()
	if err != nil || string(got) != "0123456789abcdef-secret-in-file" {
		t.Fatalf("from the file: %q, %v", got, err)
	}
	got, err = config.MemberSSL{Enabled: true}.Secret()
	if err != nil || string(got) != "0123456789abcdef-secret-in-env" {
		t.Fatalf("from the environment: %q, %v", got, err)
	}
	t.Setenv(config.ClusterSecretEnv, "short-pw")
	if _, err := (config.MemberSSL{Enabled: true}).Secret(); err == nil || strings.Contains(err.Error(), "short-pw") || !strings.Contains(err.Error(), config.ClusterSecretEnv) {
		t.Errorf("a short secret: %v", err)
	}
	if _, err := (config.MemberSSL{Enabled: true, SecretFile: filepath.Join(dir, "missing")}).Secret(); err == nil || !strings.Contains(err.Error(), "cluster-secret-file") {
		t.Errorf("a missing file: %v", err)
	}

	c, err := config.Parse(nil, hzSSL("        cluster-secret-file: "+f+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if d := c.String(); strings.Contains(d, "secret-in-file") || !strings.Contains(d, "cluster-secret-file: "+f) {
		t.Errorf("dump:\n%s", d)
	}
}
