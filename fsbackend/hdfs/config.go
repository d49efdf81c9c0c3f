package hdfs

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/colinmarc/hdfs/v2/hadoopconf"

	"github.com/stowage/stowage/fsbackend"
)

// Property keys read by this back end, as SeaTunnel spells them.
const (
	KeyDefaultFS          = "fs.defaultFS"
	KeyHadoopPrefix       = "seatunnel.hadoop."
	KeyHdfsSitePath       = "hdfs_site_path"
	KeyKerberosPrincipal  = "kerberosPrincipal"
	KeyKerberosKeytabPath = "kerberosKeytabFilePath"
	KeyKrb5Path           = "krb5Path"
	KeyDisableCache       = "disable.cache"
	// KeySyncOnClose is stowage's own: true (the default) makes every
	// DataNode of the pipeline sync a file's blocks to disk before Close
	// returns; false accepts blocks the DataNodes hold in memory only.
	KeySyncOnClose = "stowage.hdfs.sync-on-close"
)

// defaultNameNodePort is the NameNode RPC port used when fs.defaultFS names
// a host without a port and no nameservice of that name is configured.
const defaultNameNodePort = "8020"

// Config is what Properties resolve to: where the NameNodes are, who the
// client is, and the client settings taken from Hadoop keys. It is built by
// ParseProperties and not changed afterwards; it is safe for concurrent
// reads.
type Config struct {
	// URI is fs.defaultFS as given.
	URI string
	// Nameservice is the logical HA nameservice, or "" for host:port.
	Nameservice string
	// Addresses are the NameNode RPC addresses (host:port), in the order the
	// client tries them.
	Addresses []string
	// User is the HDFS user name (without Kerberos).
	User string
	// Umask clears permission bits of new files (0666) and directories
	// (0777): fs.permissions.umask-mode from the properties, else
	// fsbackend.DefaultUmask (the NameNode applies its own
	// fs.permissions.umask-mode on top).
	Umask os.FileMode
	// UseDatanodeHostname is dfs.client.use.datanode.hostname.
	UseDatanodeHostname bool
	// Kerberos is set when kerberosPrincipal and kerberosKeytabFilePath are.
	Kerberos *KerberosConfig
	// DialTimeout is ipc.client.connect.timeout.
	DialTimeout time.Duration
	// NameNodeTimeout bounds each read or write on a NameNode connection
	// (ipc.client.rpc-timeout.ms, 0 for none).
	NameNodeTimeout time.Duration
	// SocketTimeout bounds each DataNode read or write
	// (dfs.client.socket-timeout).
	SocketTimeout time.Duration
	// FailoverAttempts, FailoverSleepBase and FailoverSleepMax bound the
	// retries of an operation while no NameNode can be reached.
	FailoverAttempts  int
	FailoverSleepBase time.Duration
	FailoverSleepMax  time.Duration
	// CloseRetries and CloseRetryDelay are how often, and after what first
	// delay (doubling), Close asks the NameNode again to complete a file
	// whose last block is not yet reported, after a first fast phase of
	// about 0.6 s (dfs.client.block.write.locateFollowingBlock.retries and
	// .initial.delay.ms, as in the Java client). They also bound the
	// rewrites of a file after a block allocation refused with
	// NotReplicatedYetException (see the package doc).
	CloseRetries    int
	CloseRetryDelay time.Duration
	// DisableCache gives the FS a private client.
	DisableCache bool
	// SyncOnClose is stowage.hdfs.sync-on-close (default true): the last
	// packet of each block asks the DataNodes to sync the block to disk
	// before they acknowledge it, so a file is on every DataNode's disk
	// when Close returns. It is a per-file setting, not part of the client
	// cache key.
	SyncOnClose bool

	// hadoop holds the merged Hadoop settings; origin names where each one
	// came from, for error messages.
	hadoop map[string]setting
}

// KerberosConfig is the Kerberos part of a Config.
type KerberosConfig struct {
	Principal  string // kerberosPrincipal, e.g. stowage/host@EXAMPLE.COM
	KeytabPath string // kerberosKeytabFilePath
	Krb5Path   string // krb5Path, $KRB5_CONFIG or /etc/krb5.conf
	// ServicePrincipal is the NameNode's principal without the realm
	// (dfs.namenode.kerberos.principal), e.g. nn/host.
	ServicePrincipal string
}

type setting struct {
	value  string
	origin string // "seatunnel.hadoop.<key>" or "<key> in <file>"
}

// Hadoop returns the merged Hadoop setting key and whether it is set.
func (c *Config) Hadoop(key string) (string, bool) {
	s, ok := c.hadoop[key]
	return s.value, ok
}

// String describes the config for logs, without secrets.
func (c *Config) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "hdfs{uri: %s, namenodes: %s, user: %s", c.URI, strings.Join(c.Addresses, ","), c.User)
	if c.Kerberos != nil {
		fmt.Fprintf(&b, ", principal: %s", c.Kerberos.Principal)
	}
	b.WriteByte('}')
	return b.String()
}

func (c *Config) hadoopConf() hadoopconf.HadoopConf {
	out := make(hadoopconf.HadoopConf, len(c.hadoop))
	for k, s := range c.hadoop {
		out[k] = s.value
	}
	return out
}

// cacheKey identifies the clients that may be shared: same NameNodes, same
// identity, same client settings.
func (c *Config) cacheKey() string {
	var b strings.Builder
	fmt.Fprintf(&b, "nn=%s|user=%s|dnhost=%t|dial=%s|nnto=%s|sock=%s",
		strings.Join(c.Addresses, ","), c.User, c.UseDatanodeHostname, c.DialTimeout, c.NameNodeTimeout, c.SocketTimeout)
	if k := c.Kerberos; k != nil {
		fmt.Fprintf(&b, "|krb=%s|keytab=%s|krb5=%s|spn=%s", k.Principal, k.KeytabPath, k.Krb5Path, k.ServicePrincipal)
	}
	conf := c.hadoopConf()
	for _, k := range []string{"dfs.data.transfer.protection", "dfs.encrypt.data.transfer"} {
		fmt.Fprintf(&b, "|%s=%s", k, conf[k])
	}
	return b.String()
}

// ParseProperties resolves SeaTunnel storage properties into a Config. It
// reads $HADOOP_CONF_DIR (or $HADOOP_HOME/conf) and hdfs_site_path but does
// not contact any server. Errors name the offending key.
func ParseProperties(p fsbackend.Properties) (*Config, error) {
	c := &Config{hadoop: map[string]setting{}}

	// Lowest precedence first: the environment's Hadoop conf directory.
	envConf, err := hadoopconf.LoadFromEnvironment()
	if err != nil {
		return nil, fmt.Errorf("stowage/fsbackend/hdfs: HADOOP_CONF_DIR: %w", err)
	}
	dir := os.Getenv("HADOOP_CONF_DIR")
	if dir == "" {
		dir = filepath.Join(os.Getenv("HADOOP_HOME"), "conf")
	}
	for k, v := range envConf {
		c.hadoop[k] = setting{v, fmt.Sprintf("%s in %s", k, dir)}
	}
	if path := p.Get(KeyHdfsSitePath, ""); path != "" {
		conf, err := loadXML(path)
		if err != nil {
			return nil, fmt.Errorf("stowage/fsbackend/hdfs: key %s: %w", KeyHdfsSitePath, err)
		}
		for k, v := range conf {
			c.hadoop[k] = setting{v, fmt.Sprintf("%s in %s", k, path)}
		}
	}
	for k, v := range p {
		if hk, ok := strings.CutPrefix(k, KeyHadoopPrefix); ok && hk != "" {
			c.hadoop[hk] = setting{strings.TrimSpace(v), k}
		}
	}

	def := p.Get(KeyDefaultFS, "")
	if s, ok := c.hadoop["fs.defaultFS"]; ok && s.value != "" {
		if def == "" {
			def = s.value
		} else if s.origin == KeyHadoopPrefix+"fs.defaultFS" && s.value != def {
			return nil, fmt.Errorf("stowage/fsbackend/hdfs: key %s (%q) contradicts key %s (%q)", s.origin, s.value, KeyDefaultFS, def)
		}
	}
	if def == "" {
		return nil, fmt.Errorf("stowage/fsbackend/hdfs: key %s is required (hdfs://host:port or hdfs://nameservice)", KeyDefaultFS)
	}
	c.URI = def
	if err := c.resolveNameNodes(def); err != nil {
		return nil, err
	}

	if c.UseDatanodeHostname, err = c.boolSetting("dfs.client.use.datanode.hostname", false); err != nil {
		return nil, err
	}
	if c.DialTimeout, err = c.millis("ipc.client.connect.timeout", 20000); err != nil {
		return nil, err
	}
	if c.NameNodeTimeout, err = c.millis("ipc.client.rpc-timeout.ms", 120000); err != nil {
		return nil, err
	}
	if c.SocketTimeout, err = c.millis("dfs.client.socket-timeout", 60000); err != nil {
		return nil, err
	}
	if c.FailoverSleepBase, err = c.millis("dfs.client.failover.sleep.base.millis", 500); err != nil {
		return nil, err
	}
	if c.FailoverSleepMax, err = c.millis("dfs.client.failover.sleep.max.millis", 15000); err != nil {
		return nil, err
	}
	attempts, err := c.intSetting("dfs.client.failover.max.attempts", 15)
	if err != nil {
		return nil, err
	}
	c.FailoverAttempts = attempts
	if c.CloseRetries, err = c.intSetting("dfs.client.block.write.locateFollowingBlock.retries", 5); err != nil {
		return nil, err
	}
	if c.CloseRetryDelay, err = c.millis("dfs.client.block.write.locateFollowingBlock.initial.delay.ms", 400); err != nil {
		return nil, err
	}

	if v := p.Get(KeyDisableCache, "false"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("stowage/fsbackend/hdfs: key %s: %q is not true or false", KeyDisableCache, v)
		}
		c.DisableCache = b
	}
	if c.SyncOnClose, err = boolProperty(p, KeySyncOnClose, true); err != nil {
		return nil, err
	}

	if err := c.resolveKerberos(p); err != nil {
		return nil, err
	}
	if c.Umask, err = fsbackend.Umask(p); err != nil {
		return nil, err
	}
	if c.Kerberos == nil {
		c.User, err = resolveUser(c)
		if err != nil {
			return nil, err
		}
	}
	return c, nil
}

// resolveNameNodes fills Nameservice and Addresses from fs.defaultFS and the
// HA keys, and checks the HA keys against each other.
func (c *Config) resolveNameNodes(def string) error {
	u, err := url.Parse(def)
	if err != nil {
		return fmt.Errorf("stowage/fsbackend/hdfs: key %s: %q is not a URI: %w", KeyDefaultFS, def, err)
	}
	if strings.ToLower(u.Scheme) != "hdfs" {
		return fmt.Errorf("stowage/fsbackend/hdfs: key %s: scheme %q is not hdfs (want hdfs://host:port or hdfs://nameservice)", KeyDefaultFS, u.Scheme)
	}
	if u.Host == "" {
		return fmt.Errorf("stowage/fsbackend/hdfs: key %s: %q names no NameNode or nameservice", KeyDefaultFS, def)
	}
	if u.User != nil {
		return fmt.Errorf("stowage/fsbackend/hdfs: key %s: user information is not allowed in the URI", KeyDefaultFS)
	}

	// Common misspellings of the HA keys would otherwise be ignored quietly.
	for k, s := range c.hadoop {
		if want := misspelledHAKey(k); want != "" {
			return fmt.Errorf("stowage/fsbackend/hdfs: key %s: unknown HA key (did you mean %s?)", s.origin, want)
		}
	}

	// Nameservices declared by any key.
	declared := map[string]bool{}
	if s, ok := c.hadoop["dfs.nameservices"]; ok {
		for _, ns := range splitList(s.value) {
			declared[ns] = true
		}
	}
	haNamenodes := map[string][]string{}
	var keys []string
	for k := range c.hadoop {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if ns, ok := strings.CutPrefix(k, "dfs.ha.namenodes."); ok {
			s := c.hadoop[k]
			if len(declared) > 0 && !declared[ns] {
				return fmt.Errorf("stowage/fsbackend/hdfs: key %s: nameservice %q is not listed in dfs.nameservices", s.origin, ns)
			}
			nns := splitList(s.value)
			if len(nns) == 0 {
				return fmt.Errorf("stowage/fsbackend/hdfs: key %s: no NameNode ids", s.origin)
			}
			haNamenodes[ns] = nns
		}
	}
	// Every rpc-address.<ns>.<nn> must name a known nameservice and NameNode.
	for _, k := range keys {
		rest, ok := strings.CutPrefix(k, "dfs.namenode.rpc-address.")
		if !ok {
			continue
		}
		s := c.hadoop[k]
		ns, nn, ok := splitNsNn(rest, haNamenodes)
		if !ok {
			if _, isNS := haNamenodes[rest]; isNS || declared[rest] {
				continue // federation form dfs.namenode.rpc-address.<ns>
			}
			return fmt.Errorf("stowage/fsbackend/hdfs: key %s: no dfs.ha.namenodes.<nameservice> lists this NameNode", s.origin)
		}
		if !contains(haNamenodes[ns], nn) {
			return fmt.Errorf("stowage/fsbackend/hdfs: key %s: NameNode %q is not in dfs.ha.namenodes.%s (%s)", s.origin, nn, ns, strings.Join(haNamenodes[ns], ","))
		}
		if _, _, err := net.SplitHostPort(s.value); err != nil {
			return fmt.Errorf("stowage/fsbackend/hdfs: key %s: %q is not host:port", s.origin, s.value)
		}
	}
	for _, k := range keys {
		if ns, ok := strings.CutPrefix(k, "dfs.client.failover.proxy.provider."); ok {
			if _, known := haNamenodes[ns]; !known {
				return fmt.Errorf("stowage/fsbackend/hdfs: key %s: nameservice %q has no dfs.ha.namenodes.%s", c.hadoop[k].origin, ns, ns)
			}
		}
	}

	host := u.Hostname()
	if nns, isNS := haNamenodes[host]; isNS {
		if u.Port() != "" {
			return fmt.Errorf("stowage/fsbackend/hdfs: key %s: %q: a nameservice takes no port", KeyDefaultFS, def)
		}
		c.Nameservice = host
		for _, nn := range nns {
			k := "dfs.namenode.rpc-address." + host + "." + nn
			s, ok := c.hadoop[k]
			if !ok || s.value == "" {
				return fmt.Errorf("stowage/fsbackend/hdfs: key %s%s is missing (NameNode %q of nameservice %q)", KeyHadoopPrefix, k, nn, host)
			}
			c.Addresses = append(c.Addresses, s.value)
		}
		return nil
	}
	if declared[host] {
		return fmt.Errorf("stowage/fsbackend/hdfs: key %s%s is missing (nameservice %q of %s)", KeyHadoopPrefix, "dfs.ha.namenodes."+host, host, KeyDefaultFS)
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(host, defaultNameNodePort)
	}
	c.Addresses = []string{addr}
	return nil
}

// splitNsNn splits "<ns>.<nn>" where ns may itself contain dots, using the
// known nameservices.
func splitNsNn(rest string, known map[string][]string) (string, string, bool) {
	for ns := range known {
		if nn, ok := strings.CutPrefix(rest, ns+"."); ok && nn != "" && !strings.Contains(nn, ".") {
			return ns, nn, true
		}
	}
	return "", "", false
}

func resolveUser(c *Config) (string, error) {
	if s, ok := c.hadoop["hadoop.user.name"]; ok && s.value != "" {
		return s.value, nil
	}
	if u := os.Getenv("HADOOP_USER_NAME"); u != "" {
		return u, nil
	}
	u, err := user.Current()
	if err != nil {
		return "", fmt.Errorf("stowage/fsbackend/hdfs: no HDFS user: set %shadoop.user.name or HADOOP_USER_NAME: %w", KeyHadoopPrefix, err)
	}
	return u.Username, nil
}

func (c *Config) boolSetting(key string, def bool) (bool, error) {
	s, ok := c.hadoop[key]
	if !ok || s.value == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(s.value)
	if err != nil {
		return false, fmt.Errorf("stowage/fsbackend/hdfs: key %s: %q is not true or false", s.origin, s.value)
	}
	return b, nil
}

// boolProperty reads the stowage property key as true or false.
func boolProperty(p fsbackend.Properties, key string, def bool) (bool, error) {
	v := strings.TrimSpace(p.Get(key, ""))
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("stowage/fsbackend/hdfs: key %s: %q is not true or false", key, v)
	}
	return b, nil
}

func (c *Config) intSetting(key string, def int) (int, error) {
	s, ok := c.hadoop[key]
	if !ok || s.value == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s.value)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("stowage/fsbackend/hdfs: key %s: %q is not a non-negative integer", s.origin, s.value)
	}
	return n, nil
}

func (c *Config) millis(key string, def int) (time.Duration, error) {
	n, err := c.intSetting(key, def)
	return time.Duration(n) * time.Millisecond, err
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// misspelledHAKey returns the key that an unknown HA-looking key was
// probably meant to be, or "".
func misspelledHAKey(k string) string {
	switch {
	case k == "dfs.nameservice":
		return "dfs.nameservices"
	case strings.HasPrefix(k, "dfs.ha.namenode.") && k != "dfs.ha.namenode.id":
		return "dfs.ha.namenodes." + strings.TrimPrefix(k, "dfs.ha.namenode.")
	case strings.HasPrefix(k, "dfs.namenode.rpc.address."):
		return "dfs.namenode.rpc-address." + strings.TrimPrefix(k, "dfs.namenode.rpc.address.")
	case strings.HasPrefix(k, "dfs.namenode.rpc-addresses."):
		return "dfs.namenode.rpc-address." + strings.TrimPrefix(k, "dfs.namenode.rpc-addresses.")
	case strings.HasPrefix(k, "dfs.client.failover.proxy.providers."):
		return "dfs.client.failover.proxy.provider." + strings.TrimPrefix(k, "dfs.client.failover.proxy.providers.")
	}
	return ""
}
