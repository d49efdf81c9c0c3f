package hdfs

import (
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"strings"

	krbclient "github.com/jcmturner/gokrb5/v8/client"
	krbconfig "github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/krberror"

	"github.com/stowage/stowage/fsbackend"
)

// ErrKerberos marks every Kerberos failure: an unreadable keytab, a keytab
// without the principal, a bad krb5.conf, a failed login.
var ErrKerberos = errors.New("stowage/fsbackend/hdfs: kerberos")

func (c *Config) resolveKerberos(p fsbackend.Properties) error {
	principal := p.Get(KeyKerberosPrincipal, "")
	keytabPath := p.Get(KeyKerberosKeytabPath, "")
	auth, _ := c.Hadoop("hadoop.security.authentication")
	switch {
	case principal == "" && keytabPath == "":
		if strings.EqualFold(auth, "kerberos") {
			return fmt.Errorf("stowage/fsbackend/hdfs: key %s is kerberos, but keys %s and %s are not set",
				c.hadoop["hadoop.security.authentication"].origin, KeyKerberosPrincipal, KeyKerberosKeytabPath)
		}
		return nil
	case principal == "":
		return fmt.Errorf("stowage/fsbackend/hdfs: key %s is set but key %s is not", KeyKerberosKeytabPath, KeyKerberosPrincipal)
	case keytabPath == "":
		return fmt.Errorf("stowage/fsbackend/hdfs: key %s is set but key %s is not", KeyKerberosPrincipal, KeyKerberosKeytabPath)
	}
	if auth != "" && !strings.EqualFold(auth, "kerberos") {
		return fmt.Errorf("stowage/fsbackend/hdfs: key %s is %q, which contradicts key %s", c.hadoop["hadoop.security.authentication"].origin, auth, KeyKerberosPrincipal)
	}
	k := &KerberosConfig{Principal: principal, KeytabPath: keytabPath}
	k.Krb5Path = p.Get(KeyKrb5Path, os.Getenv("KRB5_CONFIG"))
	if k.Krb5Path == "" {
		k.Krb5Path = "/etc/krb5.conf"
	}
	spn, ok := c.Hadoop("dfs.namenode.kerberos.principal")
	if !ok || spn == "" {
		return fmt.Errorf("stowage/fsbackend/hdfs: Kerberos needs the NameNode's principal: set key %sdfs.namenode.kerberos.principal (e.g. nn/_HOST@REALM)", KeyHadoopPrefix)
	}
	k.ServicePrincipal, _, _ = strings.Cut(spn, "@")
	c.Kerberos = k
	return nil
}

// splitPrincipal splits "a/b@REALM" into its name components and realm.
func splitPrincipal(p string) ([]string, string) {
	name, realm, _ := strings.Cut(p, "@")
	return strings.Split(name, "/"), realm
}

// kerberosClient reads the keytab, checks that it holds the principal,
// reads krb5.conf and logs in. Errors name the file and the principal,
// never key material.
func (k *KerberosConfig) kerberosClient() (*krbclient.Client, error) {
	kt, err := keytab.Load(k.KeytabPath)
	if err != nil {
		return nil, fmt.Errorf("%w: key %s: cannot read keytab file %s: %w", ErrKerberos, KeyKerberosKeytabPath, k.KeytabPath, scrub(err))
	}
	comps, realm := splitPrincipal(k.Principal)
	found := ""
	for _, e := range kt.Entries {
		if strings.Join(e.Principal.Components, "/") == strings.Join(comps, "/") && (realm == "" || e.Principal.Realm == realm) {
			found = e.Principal.Realm
			break
		}
	}
	if found == "" {
		return nil, fmt.Errorf("%w: key %s: keytab file %s holds no key for principal %s (key %s)", ErrKerberos, KeyKerberosKeytabPath, k.KeytabPath, k.Principal, KeyKerberosPrincipal)
	}
	if realm == "" {
		realm = found
	}
	cfg, err := krbconfig.Load(k.Krb5Path)
	if err != nil {
		return nil, fmt.Errorf("%w: cannot read krb5.conf %s (key %s or KRB5_CONFIG): %w", ErrKerberos, k.Krb5Path, KeyKrb5Path, err)
	}
	cl := krbclient.NewWithKeytab(strings.Join(comps, "/"), realm, kt, cfg, krbclient.DisablePAFXFAST(true))
	if err := cl.Login(); err != nil {
		return nil, fmt.Errorf("%w: login as %s with keytab %s failed: %s: %w", ErrKerberos, k.Principal, k.KeytabPath, loginFailure(err, cfg, realm), err)
	}
	return cl, nil
}

// loginFailure says in words which of the usual causes made a keytab
// login fail: the KDC cannot be reached, it does not know the principal,
// or the keytab's key is not the principal's current key.
func loginFailure(err error, cfg *krbconfig.Config, realm string) string {
	var ke krberror.Krberror
	root := ""
	if errors.As(err, &ke) {
		root = ke.RootCause
	}
	text := err.Error()
	switch {
	case root == krberror.NetworkingError:
		kdcs := "none configured"
		if _, addrs, e := cfg.GetKDCs(realm, true); e == nil && len(addrs) > 0 {
			list := make([]string, 0, len(addrs))
			for i := 1; i <= len(addrs); i++ {
				list = append(list, addrs[i])
			}
			kdcs = strings.Join(list, ", ")
		}
		return fmt.Sprintf("cannot reach the KDC of realm %s (%s, from krb5.conf)", realm, kdcs)
	case strings.Contains(text, "KDC_ERR_C_PRINCIPAL_UNKNOWN"):
		return "the principal is unknown to the KDC"
	case root == krberror.DecryptingError, strings.Contains(text, "KDC_ERR_PREAUTH_FAILED"):
		return "the keytab's key does not match the KDC's key for the principal (wrong or outdated keytab)"
	case strings.Contains(text, "KDC_ERR_CLIENT_REVOKED"):
		return "the KDC has locked or disabled the principal"
	}
	return "the KDC refused the login"
}

// scrub keeps only the text of err: keytab parse errors never carry key
// bytes, but the underlying types are not worth keeping either.
func scrub(err error) error {
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrPermission) {
		return err
	}
	return errors.New(err.Error())
}

type xmlProperty struct {
	Name  string `xml:"name"`
	Value string `xml:"value"`
}

type xmlConfiguration struct {
	Property []xmlProperty `xml:"property"`
}

// loadXML reads one Hadoop configuration file (hdfs-site.xml format).
func loadXML(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var conf xmlConfiguration
	if err := xml.Unmarshal(b, &conf); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := make(map[string]string, len(conf.Property))
	for _, p := range conf.Property {
		out[strings.TrimSpace(p.Name)] = strings.TrimSpace(p.Value)
	}
	return out, nil
}
