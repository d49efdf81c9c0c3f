package stowage.peers;

import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.NetworkConfig;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;

/**
 * One Hazelcast member of the cluster ceiling in {@code stowage bench
 * --peers --peers-cluster}: open source Hazelcast, no map store, map
 * {@code bench} with backup-count 1 (synchronous), on 127.0.0.1 at a
 * fixed port, joining the others by TCP-IP (multicast and auto-detection
 * off). Prints {@code READY <port>} once started and runs until its
 * standard input closes.
 *
 * <p>Arguments: {@code --cluster} the cluster name, {@code --port} its
 * port, {@code --members} the comma-separated {@code host:port} of every
 * member, itself included.
 */
public final class HzClusterMember {
    private HzClusterMember() {}

    /** The map every client writes. */
    static final String MAP = "bench";

    public static void main(String[] argv) throws Exception {
        Args a = new Args(argv);
        int port = a.getInt("port", 5701);
        Config c = new Config();
        c.setClusterName(a.get("cluster", "stowage-peers"));
        c.setProperty("hazelcast.phone.home.enabled", "false");
        c.setProperty("hazelcast.logging.type", "none");
        NetworkConfig n = c.getNetworkConfig();
        n.setPort(port).setPortAutoIncrement(false);
        n.getInterfaces().setEnabled(true).addInterface("127.0.0.1");
        JoinConfig j = n.getJoin();
        j.getMulticastConfig().setEnabled(false);
        j.getAutoDetectionConfig().setEnabled(false);
        j.getTcpIpConfig().setEnabled(true);
        for (String m : a.get("members", "127.0.0.1:" + port).split(",")) {
            j.getTcpIpConfig().addMember(m.trim());
        }
        c.getMapConfig(MAP).setBackupCount(1).setAsyncBackupCount(0);
        HazelcastInstance hz = Hazelcast.newHazelcastInstance(c);
        System.out.println("READY " + port);
        System.out.flush();
        while (System.in.read() >= 0) {
            // until the bench closes our standard input
        }
        hz.shutdown();
        System.exit(0);
    }
}
