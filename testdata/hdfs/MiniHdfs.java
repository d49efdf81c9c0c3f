// MiniHdfs runs a real HDFS (MiniDFSCluster: NameNode(s) + one DataNode) on
// 127.0.0.1 for stowage's HDFS back-end tests, and takes orders on a small
// line protocol so that a test can fail over, enter safe mode, set quotas and
// restart NameNodes. start.sh compiles and starts it; see README.md.
//
// Usage: java MiniHdfs single|ha|kerberos BASE_DIR CONF_DIR READY_FILE
//
// "kerberos" is "single" with Hadoop security on: the system properties
// stowage.krb.keytab (a keytab holding hdfs/localhost and HTTP/localhost)
// and stowage.krb.realm name the service keys, java.security.krb5.conf the
// KDC. NameNode and DataNode log in as hdfs/localhost@REALM; the data
// transfer protocol is protected by SASL ("authentication") with block
// access tokens, on unprivileged ports (ignore.secure.ports.for.testing).
//
// The system property stowage.hdfs.host (single mode only; default
// 127.0.0.1) names the address the cluster is reached at, for a test that
// runs it inside a network namespace of its own and reaches it from
// others: the NameNode listens on every address (of that namespace), the
// DataNode binds its data, IPC and HTTP ports to the address, registers
// it as its host name and dials the NameNode there, so that the NameNode
// (which takes a DataNode's address from the connection it registers
// over) hands that address to clients; the conf files and READY_FILE name
// the NameNode by it. The control port stays on 127.0.0.1.
//
// When the cluster is active it writes CONF_DIR/core-site.xml and
// hdfs-site.xml, then READY_FILE (shell `export` lines), last of all, so
// that the file's appearance means "ready". It stops on SIGTERM, on the
// control command "shutdown", or when stdin reaches end of file if the
// system property stowage.stdinWatch is true.
//
// Control protocol (one TCP connection per client, one command per line,
// one reply line per command, "ok ..." or "err ..."):
//
//   ping                       ok
//   state                      ok nn0=active nn1=standby
//   active                     ok <index of the active NameNode>
//   failover                   make the standby active (transitionToStandby
//                              of the active one, transitionToActive of the other)
//   transition-active I        transitionToActive(I)
//   transition-standby I       transitionToStandby(I)
//   shutdown-nn I              shutdownNameNode(I)
//   restart-nn I               restartNameNode(I) and wait until it is up
//                              (in HA mode it comes back standby)
//   restart                    restart every NameNode (single: and wait active)
//   safemode enter|leave       on the active NameNode
//   quota PATH NS DS           setQuota(PATH, NS, DS): NS counts names
//                              (files + directories), DS counts bytes
//                              times replication; "-" leaves one unchanged
//   clrquota PATH              clear both quotas
//   mkdir PATH                 mkdirs
//   chmod PATH OCTAL           setPermission
//   chown PATH USER GROUP      setOwner
//   dn-http                    ok <host:port of each DataNode's HTTP server>
//                              (its metrics: /jmx?qry=Hadoop:service=DataNode,...)
//   ibr pause|resume           hold back (or send again) the DataNodes'
//                              incremental block reports, so that blocks
//                              stay unreported (NotReplicatedYetException)
//   shutdown                   stop the cluster and exit
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.client.BlockReportOptions;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.hdfs.MiniDFSNNTopology;
import org.apache.hadoop.hdfs.protocol.HdfsConstants;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.apache.hadoop.hdfs.server.datanode.DataNodeTestUtils;
import org.apache.hadoop.security.UserGroupInformation;

public final class MiniHdfs {
    private static final String NS = "stowagens";

    private final boolean ha;
    private final boolean krb;
    private final String host;
    private final File base;
    private final File confDir;
    private final File readyFile;
    private final int[] nnPorts;
    private MiniDFSCluster cluster;
    private final CountDownLatch stop = new CountDownLatch(1);

    private MiniHdfs(String mode, File base, File confDir, File readyFile) throws IOException {
        this.ha = mode.equals("ha");
        this.krb = mode.equals("kerberos");
        this.base = base;
        this.confDir = confDir;
        this.readyFile = readyFile;
        this.host = System.getProperty("stowage.hdfs.host", "127.0.0.1");
        if (!host.equals("127.0.0.1") && !mode.equals("single")) {
            throw new IllegalArgumentException("stowage.hdfs.host is for single mode only");
        }
        this.nnPorts = new int[ha ? 2 : 1];
        for (int i = 0; i < nnPorts.length; i++) {
            nnPorts[i] = freePort(host);
        }
    }

    private static int freePort(String host) throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName(host))) {
            return s.getLocalPort();
        }
    }

    private Configuration conf() {
        Configuration conf = new HdfsConfiguration();
        conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, base.getAbsolutePath());
        // Permissions are on so that tests can see AccessControlException as
        // a non-superuser; the user running this JVM is the superuser.
        conf.setBoolean("dfs.permissions.enabled", true);
        conf.setInt("dfs.replication", 1);
        conf.setInt("dfs.namenode.safemode.extension", 0);
        conf.setInt("dfs.namenode.safemode.min.datanodes", 0);
        conf.setLong("dfs.blocksize", 1024 * 1024);
        // Hadoop's default, stated because tests rely on it: a DataNode
        // syncs a block to disk only when the client asks (syncBlock).
        conf.setBoolean("dfs.datanode.synconclose", false);
        conf.setInt("dfs.heartbeat.interval", 1);
        conf.setInt("dfs.ha.tail-edits.period", 1);
        conf.setInt("dfs.namenode.handler.count", 4);
        conf.setInt("dfs.datanode.handler.count", 4);
        conf.set("hadoop.proxyuser." + System.getProperty("user.name") + ".hosts", "*");
        conf.set("hadoop.proxyuser." + System.getProperty("user.name") + ".groups", "*");
        if (remote()) {
            // MiniDFSCluster names the NameNode 127.0.0.1 (its own checks
            // dial it there); clients and the DataNode dial the host.
            conf.set("dfs.namenode.rpc-bind-host", "0.0.0.0");
            // The DataNode's address is taken from the connection it
            // registers over; no reverse lookup of it.
            conf.setBoolean("dfs.namenode.datanode.registration.ip-hostname-check", false);
        }
        if (krb) {
            String keytab = System.getProperty("stowage.krb.keytab");
            String realm = System.getProperty("stowage.krb.realm");
            conf.set("hadoop.security.authentication", "kerberos");
            conf.setBoolean("hadoop.security.authorization", true);
            conf.set("dfs.namenode.kerberos.principal", "hdfs/localhost@" + realm);
            conf.set("dfs.namenode.keytab.file", keytab);
            conf.set("dfs.datanode.kerberos.principal", "hdfs/localhost@" + realm);
            conf.set("dfs.datanode.keytab.file", keytab);
            conf.set("dfs.web.authentication.kerberos.principal", "HTTP/localhost@" + realm);
            conf.set("dfs.web.authentication.kerberos.keytab", keytab);
            conf.setBoolean("dfs.block.access.token.enable", true);
            conf.set("dfs.data.transfer.protection", "authentication");
            conf.setBoolean("ignore.secure.ports.for.testing", true);
            // Every Kerberos client may write anywhere: the tests are about
            // authentication, not HDFS permissions.
            conf.setBoolean("dfs.permissions.enabled", false);
        }
        return conf;
    }

    private void start() throws Exception {
        Configuration conf = conf();
        if (krb) {
            UserGroupInformation.setConfiguration(conf);
            UserGroupInformation.loginUserFromKeytab("hdfs/localhost@" + System.getProperty("stowage.krb.realm"),
                    System.getProperty("stowage.krb.keytab"));
        }
        MiniDFSCluster.Builder b = new MiniDFSCluster.Builder(conf)
                // A remote host's DataNode is started below, once the
                // NameNode's port is known.
                .numDataNodes(remote() ? 0 : 1)
                // The DataNode registers the host name "localhost" (and the
                // address 127.0.0.1), so a test can tell whether a client
                // dialed it by host name (dfs.client.use.datanode.hostname).
                .hosts(new String[] {"localhost"})
                .format(true)
                .checkExitOnShutdown(false);
        if (ha) {
            b.nnTopology(new MiniDFSNNTopology().addNameservice(
                    new MiniDFSNNTopology.NSConf(NS)
                            .addNN(new MiniDFSNNTopology.NNConf("nn0").setIpcPort(nnPorts[0]))
                            .addNN(new MiniDFSNNTopology.NNConf("nn1").setIpcPort(nnPorts[1]))));
        } else {
            b.nameNodePort(nnPorts[0]);
        }
        cluster = b.build();
        if (remote()) {
            // With no DataNode at build time MiniDFSCluster set the
            // NameNode's default replication to 0; clients take it from
            // the NameNode's server defaults.
            cluster.getConfiguration(0).setInt("dfs.replication", 1);
            cluster.restartNameNode(0, false);
            startRemoteDataNode();
        }
        if (ha) {
            cluster.transitionToActive(0);
        }
        cluster.waitActive();
        cluster.waitClusterUp();
        writeConf();
        writeReady();
        log("ready: " + describe());
    }

    private boolean remote() {
        return !host.equals("127.0.0.1");
    }

    // startRemoteDataNode starts the DataNode with its ports on the host and
    // the NameNode dialed at the host, so that it registers with the host's
    // address (the NameNode records the source address of the connection).
    private void startRemoteDataNode() throws IOException {
        Configuration dn = new HdfsConfiguration(cluster.getConfiguration(0));
        String nn = host + ":" + nnPorts[0];
        dn.set("fs.defaultFS", "hdfs://" + nn);
        dn.set("dfs.namenode.rpc-address", nn);
        dn.set("dfs.datanode.address", host + ":0");
        dn.set("dfs.datanode.ipc.address", host + ":0");
        dn.set("dfs.datanode.http.address", host + ":0");
        dn.set("dfs.datanode.hostname", host);
        // checkDataNodeAddrConfig and checkDataNodeHostConfig: keep the
        // addresses and the host name set above instead of MiniDFSCluster's
        // 127.0.0.1. No hosts argument: MiniDFSCluster would resolve those
        // names to localhost in this JVM, the DataNode would dial the
        // NameNode at 127.0.0.1 and register with that address.
        cluster.startDataNodes(dn, 1, null, true, null, null, null, null, null, false, true, true, null, null, null);
    }

    private String describe() {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < nnPorts.length; i++) {
            sb.append(i == 0 ? "" : " ").append("nn").append(i).append('=').append(host).append(':').append(nnPorts[i]);
        }
        return sb.toString();
    }

    private void writeConf() throws IOException {
        confDir.mkdirs();
        StringBuilder core = new StringBuilder();
        StringBuilder site = new StringBuilder();
        if (ha) {
            prop(core, "fs.defaultFS", "hdfs://" + NS);
            prop(site, "dfs.nameservices", NS);
            prop(site, "dfs.ha.namenodes." + NS, "nn0,nn1");
            for (int i = 0; i < nnPorts.length; i++) {
                prop(site, "dfs.namenode.rpc-address." + NS + ".nn" + i, "127.0.0.1:" + nnPorts[i]);
            }
            prop(site, "dfs.client.failover.proxy.provider." + NS,
                    "org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider");
        } else {
            prop(core, "fs.defaultFS", "hdfs://" + host + ":" + nnPorts[0]);
        }
        prop(site, "dfs.replication", "1");
        if (krb) {
            String realm = System.getProperty("stowage.krb.realm");
            prop(core, "hadoop.security.authentication", "kerberos");
            prop(site, "dfs.namenode.kerberos.principal", "hdfs/localhost@" + realm);
            prop(site, "dfs.data.transfer.protection", "authentication");
        }
        writeAtomic(new File(confDir, "core-site.xml"), xml(core));
        writeAtomic(new File(confDir, "hdfs-site.xml"), xml(site));
    }

    private static void prop(StringBuilder sb, String k, String v) {
        sb.append("  <property><name>").append(k).append("</name><value>").append(v)
                .append("</value></property>\n");
    }

    private static String xml(StringBuilder props) {
        return "<?xml version=\"1.0\"?>\n<configuration>\n" + props + "</configuration>\n";
    }

    private static void writeAtomic(File f, String text) throws IOException {
        File tmp = new File(f.getPath() + ".tmp");
        Files.write(tmp.toPath(), text.getBytes(StandardCharsets.UTF_8));
        Files.move(tmp.toPath(), f.toPath(), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    private void writeReady() throws IOException {
        // The variable names are fixed by the Go tests; the prefix tells the
        // two fixture instances apart.
        String p = ha ? "STOWAGE_TEST_HDFS_HA" : krb ? "STOWAGE_TEST_HDFS_KRB" : "STOWAGE_TEST_HDFS";
        StringBuilder sb = new StringBuilder();
        if (ha) {
            sb.append("export ").append(p).append("=127.0.0.1:").append(nnPorts[0])
                    .append(",127.0.0.1:").append(nnPorts[1]).append('\n');
            sb.append("export ").append(p).append("_NS=").append(NS).append('\n');
        } else {
            sb.append("export ").append(p).append('=').append(host).append(':').append(nnPorts[0]).append('\n');
        }
        sb.append("export ").append(p).append("_CONF=").append(confDir.getAbsolutePath()).append('\n');
        sb.append("export ").append(p).append("_CTL=127.0.0.1:").append(ctlPort).append('\n');
        writeAtomic(readyFile, sb.toString());
    }

    private int ctlPort;
    private ServerSocket ctl;

    private void openControl() throws IOException {
        ctl = new ServerSocket();
        ctl.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0));
        ctlPort = ctl.getLocalPort();
        Thread t = new Thread(() -> {
            while (!ctl.isClosed()) {
                try {
                    Socket s = ctl.accept();
                    Thread h = new Thread(() -> serve(s), "ctl-conn");
                    h.setDaemon(true);
                    h.start();
                } catch (IOException e) {
                    return;
                }
            }
        }, "ctl-accept");
        t.setDaemon(true);
        t.start();
    }

    private void serve(Socket s) {
        try (Socket sock = s;
             BufferedReader in = new BufferedReader(new InputStreamReader(sock.getInputStream(), StandardCharsets.UTF_8));
             PrintWriter out = new PrintWriter(new OutputStreamWriter(sock.getOutputStream(), StandardCharsets.UTF_8), true)) {
            String line;
            while ((line = in.readLine()) != null) {
                line = line.trim();
                if (line.isEmpty()) {
                    continue;
                }
                String reply;
                try {
                    synchronized (this) {
                        reply = "ok" + command(line.split("\\s+"));
                    }
                } catch (Throwable e) {
                    log("command " + line + " failed: " + e);
                    reply = "err " + String.valueOf(e).replace('\n', ' ');
                }
                log("ctl: " + line + " -> " + reply);
                out.println(reply);
                if (line.equals("shutdown")) {
                    stop.countDown();
                    return;
                }
            }
        } catch (IOException e) {
            // The client went away.
        }
    }

    private int activeIndex() {
        if (!ha) {
            return 0;
        }
        for (int i = 0; i < nnPorts.length; i++) {
            if (cluster.getNameNode(i) != null && cluster.getNameNode(i).isActiveState()) {
                return i;
            }
        }
        throw new IllegalStateException("no active NameNode");
    }

    private DistributedFileSystem fs() throws IOException {
        return cluster.getFileSystem(activeIndex());
    }

    private String command(String[] a) throws Exception {
        switch (a[0]) {
            case "ping":
                return "";
            case "state": {
                StringBuilder sb = new StringBuilder();
                for (int i = 0; i < nnPorts.length; i++) {
                    String st = cluster.getNameNode(i) == null ? "down"
                            : cluster.getNameNode(i).isActiveState() ? "active" : "standby";
                    sb.append(" nn").append(i).append('=').append(st);
                }
                return sb.toString();
            }
            case "active":
                return " " + activeIndex();
            case "failover": {
                int from = activeIndex();
                int to = 1 - from;
                requireHA();
                waitOutOfSafeMode(to);
                cluster.transitionToStandby(from);
                cluster.transitionToActive(to);
                return " " + to;
            }
            case "transition-active":
                requireHA();
                cluster.transitionToActive(Integer.parseInt(a[1]));
                return "";
            case "transition-standby":
                requireHA();
                cluster.transitionToStandby(Integer.parseInt(a[1]));
                return "";
            case "shutdown-nn":
                cluster.shutdownNameNode(Integer.parseInt(a[1]));
                return "";
            case "restart-nn": {
                int i = Integer.parseInt(a[1]);
                cluster.restartNameNode(i, !ha);
                waitOutOfSafeMode(i);
                return "";
            }
            case "restart":
                if (ha) {
                    for (int i = 0; i < nnPorts.length; i++) {
                        cluster.restartNameNode(i, false);
                    }
                    cluster.transitionToActive(0);
                } else {
                    cluster.restartNameNodes();
                }
                cluster.waitActive();
                return "";
            case "safemode": {
                HdfsConstants.SafeModeAction act = a[1].equals("enter")
                        ? HdfsConstants.SafeModeAction.SAFEMODE_ENTER
                        : HdfsConstants.SafeModeAction.SAFEMODE_LEAVE;
                return " " + fs().setSafeMode(act);
            }
            case "quota": {
                long ns = a[2].equals("-") ? HdfsConstants.QUOTA_DONT_SET : Long.parseLong(a[2]);
                long ds = a[3].equals("-") ? HdfsConstants.QUOTA_DONT_SET : Long.parseLong(a[3]);
                fs().setQuota(new Path(a[1]), ns, ds);
                return "";
            }
            case "clrquota":
                fs().setQuota(new Path(a[1]), HdfsConstants.QUOTA_RESET, HdfsConstants.QUOTA_RESET);
                return "";
            case "mkdir":
                fs().mkdirs(new Path(a[1]));
                return "";
            case "chmod":
                fs().setPermission(new Path(a[1]), new FsPermission(Short.parseShort(a[2], 8)));
                return "";
            case "chown":
                fs().setOwner(new Path(a[1]), a[2], a[3]);
                return "";
            case "dn-http": {
                List<String> addrs = new ArrayList<>();
                for (DataNode dn : cluster.getDataNodes()) {
                    addrs.add(host + ":" + dn.getInfoPort());
                }
                return " " + String.join(" ", addrs);
            }
            case "ibr":
                for (DataNode dn : cluster.getDataNodes()) {
                    if (a[1].equals("pause")) {
                        DataNodeTestUtils.pauseIBR(dn);
                    } else {
                        DataNodeTestUtils.resumeIBR(dn);
                        dn.triggerBlockReport(new BlockReportOptions.Factory().setIncremental(true).build());
                    }
                }
                return "";
            case "shutdown":
                return "";
            default:
                throw new IllegalArgumentException("unknown command " + a[0]);
        }
    }

    // waitOutOfSafeMode waits (at most 60 s) until NameNode i has the
    // DataNode registered and has left the safe mode it starts in, as a real
    // standby would have long before a failover: block reports sent before
    // the DataNode registered are dropped, so a NameNode made active earlier
    // would never see new blocks complete.
    private void waitOutOfSafeMode(int i) throws Exception {
        long deadline = System.currentTimeMillis() + 60_000;
        while (cluster.getNameNode(i) != null
                && (cluster.getNameNode(i).isInSafeMode()
                    || cluster.getNameNode(i).getNamesystem().getNumLiveDataNodes() < 1)) {
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("nn" + i + " still in safe mode after 60s");
            }
            Thread.sleep(100);
        }
    }

    private void requireHA() {
        if (!ha) {
            throw new IllegalStateException("not an HA cluster (start with: start.sh ha)");
        }
    }

    private static void log(String msg) {
        System.err.println("minihdfs: " + msg);
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 4 || !(args[0].equals("single") || args[0].equals("ha") || args[0].equals("kerberos"))) {
            System.err.println("usage: MiniHdfs single|ha|kerberos BASE_DIR CONF_DIR READY_FILE");
            System.exit(2);
        }
        MiniHdfs m = new MiniHdfs(args[0], new File(args[1]), new File(args[2]), new File(args[3]));
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            m.stop.countDown();
            m.shutdown();
        }, "shutdown"));
        m.openControl();
        m.start();
        if (Boolean.getBoolean("stowage.stdinWatch")) {
            Thread t = new Thread(() -> {
                try {
                    while (System.in.read() >= 0) {
                        // Discard input; end of file means stop.
                    }
                } catch (IOException e) {
                    // Treat as end of file.
                }
                m.stop.countDown();
            }, "stdin-watch");
            t.setDaemon(true);
            t.start();
        }
        m.stop.await();
        m.shutdown();
        System.exit(0);
    }

    private synchronized void shutdown() {
        if (cluster != null) {
            log("shutting down");
            try {
                ctl.close();
            } catch (IOException e) {
                // Closing anyway.
            }
            cluster.shutdown(true);
            cluster = null;
            readyFile.delete();
        }
    }
}
