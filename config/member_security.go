package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"
)

// MemberSSL is hazelcast.network.ssl: TLS 1.3 with certificates on both
// ends of every member-transport connection, and memberlist's gossip
// encrypted and verified both ways. The property names of the PEM files
// are those of Hazelcast's OpenSSL engine factory.
//
//	hazelcast:
//	  network:
//	    ssl:
//	      enabled: true
//	      properties:
//	        keyCertChainFile: /etc/stowage/member.pem       # PKI mode
//	        keyFile: /etc/stowage/member-key.pem
//	        trustCertCollectionFile: /etc/stowage/ca.pem
//	        allowed-sans: member-1.example, member-2.example  # optional
//	        cluster-secret-file: /etc/stowage/cluster.secret  # gossip key; alone: shared-secret mode
//
// With the three files, each member proves itself with its certificate
// and accepts peers whose certificate chains to the CA (and names one of
// allowed-sans, when given). Without them, the shared secret is read from
// cluster-secret-file, else from the environment variable
// STOWAGE_CLUSTER_SECRET; both the transport's certificate authority and
// the gossip key are derived from it. With the files the secret is
// needed too: it then keys the gossip only.
type MemberSSL struct {
	// Enabled is ssl.enabled. Default false.
	Enabled bool
	// CertFile is properties.keyCertChainFile: this member's certificate
	// (PEM, chain allowed).
	CertFile string
	// KeyFile is properties.keyFile: its private key (PEM, unencrypted).
	KeyFile string
	// CAFile is properties.trustCertCollectionFile: the certificates of
	// the authority members' certificates must chain to (PEM).
	CAFile string
	// AllowedSANs is properties.allowed-sans: when not empty, a peer's
	// certificate must name one of them (DNS name, IP address, URI or
	// e-mail address).
	AllowedSANs []string
	// SecretFile is properties.cluster-secret-file: a file holding the
	// shared secret (at least 16 bytes; surrounding white space is
	// trimmed).
	SecretFile string
}

// ClusterSecretEnv is the environment variable the shared secret is read
// from when no cluster-secret-file is configured.
const ClusterSecretEnv = "STOWAGE_CLUSTER_SECRET"

// memberSSLSchema is hazelcast.network.ssl.
var memberSSLSchema = block(map[string]*schema{
	"enabled":            inEffect,
	"factory-class-name": noEffect,
	"properties": block(map[string]*schema{
		"keyCertChainFile":        inEffect,
		"keyFile":                 inEffect,
		"trustCertCollectionFile": inEffect,
		"allowed-sans":            inEffect,
		"cluster-secret-file":     inEffect,
		"protocol":                inEffect,
		"mutualAuthentication":    inEffect,
		// Key stores and encrypted keys are refused by readMemberSSL
		// with what to use instead.
		"keyFilePassword":       inEffect,
		"keyStore":              inEffect,
		"keyStorePassword":      inEffect,
		"keyStoreType":          inEffect,
		"keyManagerAlgorithm":   inEffect,
		"trustStore":            inEffect,
		"trustStorePassword":    inEffect,
		"trustStoreType":        inEffect,
		"trustManagerAlgorithm": inEffect,
		"validateIdentity":      inEffect,
		"ciphersuites":          inEffect,
	}),
})

func readMemberSSL(s *MemberSSL, n node) error {
	var r reader
	r.bool(&s.Enabled, n.child("enabled"))
	if r.err != nil || !s.Enabled {
		// Turned off, the properties are not used (SeaTunnel's files
		// carry a Java key store set-up there).
		if r.err == nil && !n.null() {
			n.src.noEffect = append(n.src.noEffect, n.path)
		}
		return r.err
	}
	p := n.child("properties")
	r.str(&s.CertFile, p.child("keyCertChainFile"))
	r.str(&s.KeyFile, p.child("keyFile"))
	r.str(&s.CAFile, p.child("trustCertCollectionFile"))
	r.str(&s.SecretFile, p.child("cluster-secret-file"))
	if r.err != nil {
		return r.err
	}
	sans, err := p.child("allowed-sans").list()
	if err != nil {
		return err
	}
	s.AllowedSANs = sans
	for _, k := range []string{"keyStore", "keyStorePassword", "keyStoreType", "keyManagerAlgorithm",
		"trustStore", "trustStorePassword", "trustStoreType", "trustManagerAlgorithm"} {
		if c := p.child(k); !c.null() {
			return c.fail(ErrUnsupported, "Java key stores are not read by stowage members; give PEM files as keyCertChainFile, keyFile and trustCertCollectionFile, or a cluster-secret-file")
		}
	}
	if c := p.child("keyFilePassword"); !c.null() {
		return c.fail(ErrUnsupported, "encrypted key files are not read; give keyFile as an unencrypted PEM key readable by the member's user only")
	}
	if c := p.child("ciphersuites"); !c.null() {
		return c.fail(ErrUnsupported, "TLS 1.3's cipher suites are not configurable; remove the key")
	}
	if c := p.child("protocol"); !c.null() {
		v, err := c.str()
		if err != nil {
			return err
		}
		switch strings.ToUpper(strings.TrimSpace(v)) {
		case "TLS", "TLSV1.3":
		default:
			return c.fail(ErrUnsupported, "members speak TLS 1.3 only; set protocol to TLSv1.3 or remove it")
		}
	}
	if c := p.child("mutualAuthentication"); !c.null() {
		v, err := c.str()
		if err != nil {
			return err
		}
		if !strings.EqualFold(strings.TrimSpace(v), "REQUIRED") {
			return c.fail(ErrUnsupported, "every member connection is mutually authenticated; set mutualAuthentication to REQUIRED or remove it")
		}
	}
	if c := p.child("validateIdentity"); !c.null() {
		if _, err := c.boolean(); err != nil {
			return err
		}
	}
	files := 0
	for _, f := range []string{s.CertFile, s.KeyFile, s.CAFile} {
		if f != "" {
			files++
		}
	}
	if files != 0 && files != 3 {
		return p.fail(ErrInvalid, "keyCertChainFile, keyFile and trustCertCollectionFile are needed together")
	}
	if len(s.AllowedSANs) > 0 && files == 0 {
		return p.child("allowed-sans").fail(ErrInvalid, "allowed-sans applies to certificates from keyCertChainFile; with a shared secret every holder of the secret is a member")
	}
	return nil
}

// PKI reports whether certificates are configured (else the shared
// secret is the only credential).
func (s MemberSSL) PKI() bool { return s.CertFile != "" }

// Secret returns the shared secret from cluster-secret-file, else from
// ClusterSecretEnv; nil when neither is set. Errors name the file or the
// variable, never the secret.
func (s MemberSSL) Secret() ([]byte, error) {
	const key = "hazelcast.network.ssl.properties.cluster-secret-file"
	var b []byte
	what := ""
	if s.SecretFile != "" {
		raw, err := os.ReadFile(s.SecretFile)
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return nil, fmt.Errorf("stowage/config: %s %s: %w", key, s.SecretFile, err)
		}
		b, what = bytes.TrimSpace(raw), key+" "+s.SecretFile
	} else if v, ok := os.LookupEnv(ClusterSecretEnv); ok {
		b, what = bytes.TrimSpace([]byte(v)), "environment variable "+ClusterSecretEnv
	} else {
		return nil, nil
	}
	if len(b) < 16 {
		return nil, fmt.Errorf("stowage/config: the cluster secret in %s is %d bytes long; at least 16 (for example 32 random bytes in hex)", what, len(b))
	}
	return b, nil
}

// dumpMemberSSL is network.ssl in a dump: file names, never the secret
// (which is in a file or the environment, not here).
func dumpMemberSSL(s MemberSSL) *yaml.Node {
	props := mapping()
	add := func(k, v string) {
		if v != "" {
			props.Content = append(props.Content, str(k), str(v))
		}
	}
	add("keyCertChainFile", s.CertFile)
	add("keyFile", s.KeyFile)
	add("trustCertCollectionFile", s.CAFile)
	add("allowed-sans", strings.Join(s.AllowedSANs, ","))
	add("cluster-secret-file", s.SecretFile)
	return mapping("enabled", boolean(s.Enabled), "properties", props)
}
