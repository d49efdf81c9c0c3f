package stowage.peers;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import com.hazelcast.client.HazelcastClient;
import com.hazelcast.client.config.ClientConfig;
import com.hazelcast.client.config.RoutingMode;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;

/**
 * The load of the cluster ceiling: a Hazelcast Java client (smart
 * routing: a connection to every member, each put sent to its key's
 * owner) with {@code --writers} threads putting {@code --value-size}-byte
 * values on keys of their own into the members' map {@code bench}.
 *
 * <p>It waits until the cluster has {@code --size} members, makes
 * {@code --warmup} untimed puts, prints {@code WARM} and waits for a line
 * on its standard input (the bench reads the members' CPU time then),
 * makes {@code --puts} timed puts in all, and prints one JSON line:
 * puts/s and the median and p90 latency of a put.
 *
 * <p>Arguments: {@code --cluster}, {@code --members} (comma-separated
 * {@code host:port}), {@code --size}, {@code --writers}, {@code --puts},
 * {@code --warmup}, {@code --value-size}.
 */
public final class HzClusterClient {
    private HzClusterClient() {}

    public static void main(String[] argv) throws Exception {
        Args a = new Args(argv);
        int size = a.getInt("size", 1);
        int writers = a.getInt("writers", 64);
        int puts = a.getInt("puts", 100_000);
        int warmup = a.getInt("warmup", 20_000);
        int valueSize = a.getInt("value-size", 256);
        ClientConfig cc = new ClientConfig();
        cc.setClusterName(a.get("cluster", "stowage-peers"));
        cc.setProperty("hazelcast.logging.type", "none");
        cc.getNetworkConfig().getClusterRoutingConfig().setRoutingMode(RoutingMode.ALL_MEMBERS);
        for (String m : a.get("members", "127.0.0.1:5701").split(",")) {
            cc.getNetworkConfig().addAddress(m.trim());
        }
        HazelcastInstance client = HazelcastClient.newHazelcastClient(cc);
        long deadline = System.nanoTime() + 120_000_000_000L;
        while (client.getCluster().getMembers().size() < size) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the cluster did not reach " + size + " members in 120 s");
            }
            Thread.sleep(50);
        }
        IMap<String, byte[]> map = client.getMap(HzClusterMember.MAP);
        byte[] value = new byte[valueSize];
        Arrays.fill(value, (byte) 'v');
        run(map, "warm", writers, warmup, value, null);
        // Every member owns partitions and every connection is open.
        while (client.getPartitionService().getPartitions().stream().anyMatch(p -> p.getOwner() == null)) {
            Thread.sleep(50);
        }
        System.out.println("WARM");
        System.out.flush();
        new BufferedReader(new InputStreamReader(System.in)).readLine();
        long[] took = new long[puts];
        long start = System.nanoTime();
        run(map, "timed", writers, puts, value, took);
        double secs = (System.nanoTime() - start) / 1e9;
        Arrays.sort(took);
        System.out.printf(Locale.ROOT,
                "{\"system\":\"hazelcast\",\"members\":%d,\"writers\":%d,\"puts\":%d,\"puts_per_sec\":%.1f,\"p50_ms\":%.3f,\"p90_ms\":%.3f}%n",
                size, writers, puts, puts / secs, took[puts / 2] / 1e6, took[puts * 9 / 10] / 1e6);
        System.out.flush();
        client.shutdown();
        System.exit(0);
    }

    /** Makes n puts in all from writers threads, writer w on keys prefix-w-i; took (if not null) gets each put's latency. */
    static void run(IMap<String, byte[]> map, String prefix, int writers, int n, byte[] value, long[] took) throws Exception {
        AtomicInteger next = new AtomicInteger();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Thread[] ts = new Thread[writers];
        for (int w = 0; w < writers; w++) {
            final int id = w;
            final int mine = n / writers + (w < n % writers ? 1 : 0);
            ts[w] = new Thread(() -> {
                try {
                    for (int i = 0; i < mine && failed.get() == null; i++) {
                        long t = System.nanoTime();
                        map.put(prefix + "-" + id + "-" + i, value);
                        if (took != null) {
                            took[next.getAndIncrement()] = System.nanoTime() - t;
                        }
                    }
                } catch (Throwable e) {
                    failed.compareAndSet(null, e);
                }
            });
            ts[w].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        if (failed.get() != null) {
            throw new IllegalStateException("put failed", failed.get());
        }
    }
}
