package hdfs_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/hdfs"
)

// haProps is SeaTunnel's HA example.
func haProps() fsbackend.Properties {
	return fsbackend.Properties{
		"storage.type":                                                  "hdfs",
		"fs.defaultFS":                                                  "hdfs://usdp-bing",
		"seatunnel.hadoop.dfs.nameservices":                             "usdp-bing",
		"seatunnel.hadoop.dfs.ha.namenodes.usdp-bing":                   "nn1,nn2",
		"seatunnel.hadoop.dfs.namenode.rpc-address.usdp-bing.nn1":       "usdp-bing-nn1:8020",
		"seatunnel.hadoop.dfs.namenode.rpc-address.usdp-bing.nn2":       "usdp-bing-nn2:8020",
		"seatunnel.hadoop.dfs.client.failover.proxy.provider.usdp-bing": "org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider",
	}
}

func with(p fsbackend.Properties, kv ...string) fsbackend.Properties {
	out := fsbackend.Properties{}
	for k, v := range p {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "<delete>" {
			delete(out, kv[i])
			continue
		}
		out[kv[i]] = kv[i+1]
	}
	return out
}

// isolate keeps the machine's Hadoop and Kerberos environment out of a test.
func isolate(t *testing.T) {
	t.Setenv("HADOOP_CONF_DIR", t.TempDir())
	t.Setenv("HADOOP_HOME", "")
	t.Setenv("HADOOP_USER_NAME", "")
}

func TestParsePropertiesValid(t *testing.T) {
	isolate(t)
	site := filepath.Join(t.TempDir(), "hdfs-site.xml")
	if err := os.WriteFile(site, []byte(`<?xml version="1.0"?><configuration>
<property><name>dfs.nameservices</name><value>ns1</value></property>
<property><name>dfs.ha.namenodes.ns1</name><value>a,b</value></property>
<property><name>dfs.namenode.rpc-address.ns1.a</name><value>h1:9000</value></property>
<property><name>dfs.namenode.rpc-address.ns1.b</name><value>h2:9000</value></property>
<property><name>dfs.client.socket-timeout</name><value>5000</value></property>
</configuration>`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		props     fsbackend.Properties
		addresses []string
		ns        string
		user      string
		dnHost    bool
		noCache   bool
		noSync    bool // stowage.hdfs.sync-on-close: false
		sockTO    time.Duration
	}{
		{name: "host and port", props: fsbackend.Properties{"fs.defaultFS": "hdfs://localhost:9000"},
			addresses: []string{"localhost:9000"}, sockTO: 60 * time.Second},
		{name: "default port", props: fsbackend.Properties{"fs.defaultFS": "hdfs://nn.example"},
			addresses: []string{"nn.example:8020"}, sockTO: 60 * time.Second},
		{name: "seatunnel HA example", props: haProps(), ns: "usdp-bing",
			addresses: []string{"usdp-bing-nn1:8020", "usdp-bing-nn2:8020"}, sockTO: 60 * time.Second},
		{name: "HA without dfs.nameservices", props: with(haProps(), "seatunnel.hadoop.dfs.nameservices", "<delete>"), ns: "usdp-bing",
			addresses: []string{"usdp-bing-nn1:8020", "usdp-bing-nn2:8020"}, sockTO: 60 * time.Second},
		{name: "namenode order follows dfs.ha.namenodes", props: with(haProps(), "seatunnel.hadoop.dfs.ha.namenodes.usdp-bing", "nn2, nn1"), ns: "usdp-bing",
			addresses: []string{"usdp-bing-nn2:8020", "usdp-bing-nn1:8020"}, sockTO: 60 * time.Second},
		{name: "hdfs_site_path", props: fsbackend.Properties{"fs.defaultFS": "hdfs://ns1", "hdfs_site_path": site}, ns: "ns1",
			addresses: []string{"h1:9000", "h2:9000"}, sockTO: 5 * time.Second},
		{name: "seatunnel.hadoop overrides hdfs_site_path", props: fsbackend.Properties{"fs.defaultFS": "hdfs://ns1", "hdfs_site_path": site,
			"seatunnel.hadoop.dfs.namenode.rpc-address.ns1.b": "h3:9000", "seatunnel.hadoop.dfs.client.socket-timeout": "7000"}, ns: "ns1",
			addresses: []string{"h1:9000", "h3:9000"}, sockTO: 7 * time.Second},
		{name: "user from seatunnel.hadoop.hadoop.user.name", props: fsbackend.Properties{"fs.defaultFS": "hdfs://h:1",
			"seatunnel.hadoop.hadoop.user.name": "alice"}, addresses: []string{"h:1"}, user: "alice", sockTO: 60 * time.Second},
		{name: "use datanode hostname", props: fsbackend.Properties{"fs.defaultFS": "hdfs://h:1",
			"seatunnel.hadoop.dfs.client.use.datanode.hostname": "true"}, addresses: []string{"h:1"}, dnHost: true, sockTO: 60 * time.Second},
		{name: "legit dfs.ha.namenode.id is not a misspelling", props: with(haProps(), "seatunnel.hadoop.dfs.ha.namenode.id", "nn1"), ns: "usdp-bing",
			addresses: []string{"usdp-bing-nn1:8020", "usdp-bing-nn2:8020"}, sockTO: 60 * time.Second},
		{name: "disable.cache", props: fsbackend.Properties{"fs.defaultFS": "hdfs://h:1", "disable.cache": "true"},
			addresses: []string{"h:1"}, noCache: true, sockTO: 60 * time.Second},
		{name: "sync-on-close false", props: fsbackend.Properties{"fs.defaultFS": "hdfs://h:1", "stowage.hdfs.sync-on-close": " false "},
			addresses: []string{"h:1"}, noSync: true, sockTO: 60 * time.Second},
		{name: "sync-on-close true", props: fsbackend.Properties{"fs.defaultFS": "hdfs://h:1", "stowage.hdfs.sync-on-close": "true"},
			addresses: []string{"h:1"}, sockTO: 60 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := hdfs.ParseProperties(tc.props)
			if err != nil {
				t.Fatalf("ParseProperties(%v): %v", tc.props, err)
			}
			if !slices.Equal(c.Addresses, tc.addresses) {
				t.Errorf("Addresses = %v, want %v", c.Addresses, tc.addresses)
			}
			if c.Nameservice != tc.ns {
				t.Errorf("Nameservice = %q, want %q", c.Nameservice, tc.ns)
			}
			if tc.user != "" && c.User != tc.user {
				t.Errorf("User = %q, want %q", c.User, tc.user)
			}
			if c.User == "" {
				t.Error("User is empty")
			}
			if c.UseDatanodeHostname != tc.dnHost {
				t.Errorf("UseDatanodeHostname = %t, want %t", c.UseDatanodeHostname, tc.dnHost)
			}
			if c.DisableCache != tc.noCache {
				t.Errorf("DisableCache = %t, want %t", c.DisableCache, tc.noCache)
			}
			if c.SyncOnClose != !tc.noSync {
				t.Errorf("SyncOnClose = %t, want %t", c.SyncOnClose, !tc.noSync)
			}
			if c.SocketTimeout != tc.sockTO {
				t.Errorf("SocketTimeout = %s, want %s", c.SocketTimeout, tc.sockTO)
			}
			co := c.ClientOptions()
			if !slices.Equal(co.Addresses, tc.addresses) || co.UseDatanodeHostname != tc.dnHost || co.User != c.User {
				t.Errorf("ClientOptions = %+v, does not carry the config %+v", co, c)
			}
		})
	}
}

func TestParsePropertiesUserFromEnvironment(t *testing.T) {
	isolate(t)
	t.Setenv("HADOOP_USER_NAME", "bob")
	c, err := hdfs.ParseProperties(fsbackend.Properties{"fs.defaultFS": "hdfs://h:1"})
	if err != nil {
		t.Fatal(err)
	}
	if c.User != "bob" {
		t.Errorf("User = %q, want bob from HADOOP_USER_NAME", c.User)
	}
	c, err = hdfs.ParseProperties(fsbackend.Properties{"fs.defaultFS": "hdfs://h:1", "seatunnel.hadoop.hadoop.user.name": "carol"})
	if err != nil {
		t.Fatal(err)
	}
	if c.User != "carol" {
		t.Errorf("User = %q, want carol: the property wins over HADOOP_USER_NAME", c.User)
	}
}

func TestParsePropertiesHadoopConfDir(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	t.Setenv("HADOOP_CONF_DIR", dir)
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("<configuration>"+body+"</configuration>"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("core-site.xml", `<property><name>fs.defaultFS</name><value>hdfs://envns</value></property>`)
	write("hdfs-site.xml", `<property><name>dfs.ha.namenodes.envns</name><value>x,y</value></property>
<property><name>dfs.namenode.rpc-address.envns.x</name><value>hx:1</value></property>
<property><name>dfs.namenode.rpc-address.envns.y</name><value>hy:2</value></property>`)
	c, err := hdfs.ParseProperties(fsbackend.Properties{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Nameservice != "envns" || !slices.Equal(c.Addresses, []string{"hx:1", "hy:2"}) {
		t.Errorf("from HADOOP_CONF_DIR got ns %q addresses %v", c.Nameservice, c.Addresses)
	}
	if v, ok := c.Hadoop("dfs.ha.namenodes.envns"); !ok || v != "x,y" {
		t.Errorf("Hadoop(dfs.ha.namenodes.envns) = %q, %t", v, ok)
	}
}

func TestParsePropertiesErrors(t *testing.T) {
	isolate(t)
	tests := []struct {
		name  string
		props fsbackend.Properties
		want  string // the key the error must name
	}{
		{"no fs.defaultFS", fsbackend.Properties{"storage.type": "hdfs"}, "fs.defaultFS"},
		{"not hdfs", fsbackend.Properties{"fs.defaultFS": "s3a://b"}, "fs.defaultFS"},
		{"no host", fsbackend.Properties{"fs.defaultFS": "hdfs:///"}, "fs.defaultFS"},
		{"nameservice with port", with(haProps(), "fs.defaultFS", "hdfs://usdp-bing:8020"), "fs.defaultFS"},
		{"unlisted nameservice", with(haProps(), "seatunnel.hadoop.dfs.ha.namenodes.other", "a"), "seatunnel.hadoop.dfs.ha.namenodes.other"},
		{"rpc-address of unknown namenode", with(haProps(), "seatunnel.hadoop.dfs.namenode.rpc-address.usdp-bing.nn3", "h:1"),
			"seatunnel.hadoop.dfs.namenode.rpc-address.usdp-bing.nn3"},
		{"rpc-address of unknown nameservice", with(haProps(), "seatunnel.hadoop.dfs.namenode.rpc-address.nope.nn1", "h:1"),
			"seatunnel.hadoop.dfs.namenode.rpc-address.nope.nn1"},
		{"missing rpc-address", with(haProps(), "seatunnel.hadoop.dfs.namenode.rpc-address.usdp-bing.nn2", "<delete>"),
			"seatunnel.hadoop.dfs.namenode.rpc-address.usdp-bing.nn2"},
		{"rpc-address not host:port", with(haProps(), "seatunnel.hadoop.dfs.namenode.rpc-address.usdp-bing.nn2", "justhost"),
			"seatunnel.hadoop.dfs.namenode.rpc-address.usdp-bing.nn2"},
		{"declared nameservice without namenodes", with(haProps(), "seatunnel.hadoop.dfs.ha.namenodes.usdp-bing", "<delete>",
			"seatunnel.hadoop.dfs.namenode.rpc-address.usdp-bing.nn1", "<delete>", "seatunnel.hadoop.dfs.namenode.rpc-address.usdp-bing.nn2", "<delete>",
			"seatunnel.hadoop.dfs.client.failover.proxy.provider.usdp-bing", "<delete>"), "seatunnel.hadoop.dfs.ha.namenodes.usdp-bing"},
		{"proxy provider for unknown nameservice", with(haProps(), "seatunnel.hadoop.dfs.client.failover.proxy.provider.zz", "x"),
			"seatunnel.hadoop.dfs.client.failover.proxy.provider.zz"},
		{"misspelled ha.namenodes", with(haProps(), "seatunnel.hadoop.dfs.ha.namenode.usdp-bing", "nn1,nn2"), "seatunnel.hadoop.dfs.ha.namenode.usdp-bing"},
		{"misspelled nameservices", with(haProps(), "seatunnel.hadoop.dfs.nameservice", "usdp-bing"), "seatunnel.hadoop.dfs.nameservice"},
		{"misspelled rpc-address", with(haProps(), "seatunnel.hadoop.dfs.namenode.rpc.address.usdp-bing.nn1", "h:1"),
			"seatunnel.hadoop.dfs.namenode.rpc.address.usdp-bing.nn1"},
		{"misspelled proxy provider", with(haProps(), "seatunnel.hadoop.dfs.client.failover.proxy.providers.usdp-bing", "x"),
			"seatunnel.hadoop.dfs.client.failover.proxy.providers.usdp-bing"},
		{"empty namenode list", with(haProps(), "seatunnel.hadoop.dfs.ha.namenodes.usdp-bing", " , "), "seatunnel.hadoop.dfs.ha.namenodes.usdp-bing"},
		{"contradicting defaultFS", with(haProps(), "seatunnel.hadoop.fs.defaultFS", "hdfs://other:1"), "seatunnel.hadoop.fs.defaultFS"},
		{"bad bool", fsbackend.Properties{"fs.defaultFS": "hdfs://h:1", "seatunnel.hadoop.dfs.client.use.datanode.hostname": "yes please"},
			"seatunnel.hadoop.dfs.client.use.datanode.hostname"},
		{"bad number", fsbackend.Properties{"fs.defaultFS": "hdfs://h:1", "seatunnel.hadoop.dfs.client.socket-timeout": "soon"},
			"seatunnel.hadoop.dfs.client.socket-timeout"},
		{"bad disable.cache", fsbackend.Properties{"fs.defaultFS": "hdfs://h:1", "disable.cache": "maybe"}, "disable.cache"},
		{"bad sync-on-close", fsbackend.Properties{"fs.defaultFS": "hdfs://h:1", "stowage.hdfs.sync-on-close": "sometimes"}, "stowage.hdfs.sync-on-close"},
		{"principal without keytab", fsbackend.Properties{"fs.defaultFS": "hdfs://h:1", "kerberosPrincipal": "u@R"}, "kerberosKeytabFilePath"},
		{"keytab without principal", fsbackend.Properties{"fs.defaultFS": "hdfs://h:1", "kerberosKeytabFilePath": "/k"}, "kerberosPrincipal"},
		{"kerberos auth without principal", fsbackend.Properties{"fs.defaultFS": "hdfs://h:1",
			"seatunnel.hadoop.hadoop.security.authentication": "kerberos"}, "kerberosPrincipal"},
		{"kerberos without namenode principal", fsbackend.Properties{"fs.defaultFS": "hdfs://h:1",
			"kerberosPrincipal": "u@R", "kerberosKeytabFilePath": "/k"}, "dfs.namenode.kerberos.principal"},
		{"kerberos contradicts simple auth", fsbackend.Properties{"fs.defaultFS": "hdfs://h:1", "kerberosPrincipal": "u@R", "kerberosKeytabFilePath": "/k",
			"seatunnel.hadoop.hadoop.security.authentication": "simple"}, "seatunnel.hadoop.hadoop.security.authentication"},
		{"unreadable hdfs_site_path", fsbackend.Properties{"fs.defaultFS": "hdfs://h:1", "hdfs_site_path": "/nonexistent/hdfs-site.xml"}, "hdfs_site_path"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := hdfs.ParseProperties(tc.props)
			if err == nil {
				t.Fatalf("ParseProperties(%v) = nil error, want one naming %s", tc.props, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not name %s", err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "stowage/fsbackend/hdfs: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}
}

func TestRegisteredOpener(t *testing.T) {
	isolate(t)
	// fsbackend.Open routes hdfs:// to this package; port 1 on 127.0.0.1
	// refuses connections, so the error must say the NameNode is unreachable.
	_, err := fsbackend.Open(t.Context(), fsbackend.Properties{
		"storage.type": "hdfs", "fs.defaultFS": "hdfs://127.0.0.1:1",
		"seatunnel.hadoop.dfs.client.failover.max.attempts": "0",
	})
	if err == nil {
		t.Fatal("Open on a closed port succeeded")
	}
	if !errorsIs(err, hdfs.ErrNameNodeUnreachable) || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("error %q: want ErrNameNodeUnreachable naming 127.0.0.1:1", err)
	}
	if !slices.Contains(fsbackend.Registered(), "hdfs") {
		t.Errorf("hdfs not in Registered() = %v", fsbackend.Registered())
	}
}
