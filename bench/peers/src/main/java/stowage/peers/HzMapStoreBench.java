package stowage.peers;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.MapStoreConfig;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import com.hazelcast.nio.ObjectDataInput;
import com.hazelcast.nio.ObjectDataOutput;
import com.hazelcast.nio.serialization.DataSerializable;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;

/**
 * Hazelcast 5.7 IMap on one member with {@link SeaTunnelStyleMapStore}
 * (SeaTunnel's FileMapStore over IMapFileStorage 2.3.8): write-through
 * (write-delay 0), initial load EAGER. Prints one JSON line.
 *
 * <p>{@code --mode write}: {@code --writers} threads each put
 * {@code --puts} values of {@code --value-size} bytes on keys of their
 * own (after 100 untimed puts); puts/s and the put latency.
 * {@code --mode load}: {@code --entries} entries are put (putAll in
 * batches of 1,000, which the map store gets as storeAll), the member is
 * shut down, a new one started, and the time until its EAGER map holds
 * them all is measured; entries/s of the entries it holds (and how many it holds). {@code --mode overwrite}:
 * {@code --keys} keys written {@code --rounds} times from
 * {@code --writers} threads, then the member is shut down and the bytes
 * of the map's files compared with the live bytes (keys and values).
 *
 * <p>Also: {@code --fs} ({@code file:///} or {@code hdfs://host:port}),
 * {@code --namespace}, {@code --cluster}, {@code --hadoop}.
 */
public final class HzMapStoreBench {
    private HzMapStoreBench() {}

    /** A value as the engine's maps hold: an object, which IMapFileStorage's protostuff serializer takes. */
    public static final class Value implements DataSerializable {
        public byte[] data;

        public Value() {}

        Value(byte[] data) {
            this.data = data;
        }

        @Override
        public void writeData(ObjectDataOutput out) throws IOException {
            out.writeByteArray(data);
        }

        @Override
        public void readData(ObjectDataInput in) throws IOException {
            data = in.readByteArray();
        }
    }

    public static void main(String[] argv) throws Exception {
        Args a = new Args(argv);
        String mode = a.get("mode", "write");
        int valueSize = a.getInt("value-size", 256);
        byte[] bytes = new byte[valueSize];
        Arrays.fill(bytes, (byte) 'v');
        Value value = new Value(bytes);
        Properties props = new Properties();
        props.setProperty("type", "hdfs");
        props.setProperty("storage.type", "hdfs");
        props.setProperty("fs.defaultFS", a.get("fs", "file:///"));
        props.setProperty("namespace", a.get("namespace", "/tmp/seatunnel-hz-peers"));
        props.setProperty("clusterName", a.get("cluster", "peers"));
        for (Map.Entry<String, String> e : a.hadoop().entrySet()) {
            props.setProperty(e.getKey(), e.getValue());
        }
        try {
            switch (mode) {
                case "write" -> write(props, a.getInt("writers", 1), a.getInt("puts", 1000), value);
                case "load" -> load(props, a.getInt("entries", 10_000), value);
                case "overwrite" -> overwrite(props, a.getInt("writers", 64), a.getInt("keys", 1000), a.getInt("rounds", 10), value);
                default -> throw new IllegalArgumentException("--mode " + mode + ": want write, load or overwrite");
            }
        } catch (Throwable e) {
            e.printStackTrace();
            System.exit(1); // Hazelcast's threads would keep the JVM up
        }
        System.exit(0);
    }

    /** A standalone member whose map name has the SeaTunnel-style map store, write-through and EAGER. */
    static HazelcastInstance member(Properties props, String map) {
        Config c = new Config();
        c.setClusterName("hz-mapstore-" + ProcessHandle.current().pid());
        c.setProperty("hazelcast.phone.home.enabled", "false");
        c.setProperty("hazelcast.logging.type", System.getProperty("hz.logging", "none")); // -Dhz.logging=jdk to see its log
        c.getNetworkConfig().setPortAutoIncrement(true).getInterfaces().setEnabled(true).addInterface("127.0.0.1");
        JoinConfig j = c.getNetworkConfig().getJoin();
        j.getMulticastConfig().setEnabled(false);
        j.getAutoDetectionConfig().setEnabled(false);
        j.getTcpIpConfig().setEnabled(false);
        MapStoreConfig msc = new MapStoreConfig().setEnabled(true).setImplementation(new SeaTunnelStyleMapStore())
                .setWriteDelaySeconds(0).setInitialLoadMode(MapStoreConfig.InitialLoadMode.EAGER).setProperties(props);
        c.getMapConfig(map).setBackupCount(1).setMapStoreConfig(msc);
        return Hazelcast.newHazelcastInstance(c);
    }

    static void write(Properties props, int writers, int puts, Value value) throws Exception {
        String name = "bench_write_" + writers;
        HazelcastInstance hz = member(props, name);
        IMap<String, Value> map = hz.getMap(name);
        for (int i = 0; i < 100; i++) {
            map.put("warm-" + i, value);
        }
        long[] took = new long[writers * puts];
        AtomicInteger next = new AtomicInteger();
        long start = System.nanoTime();
        parallel(writers, w -> {
            for (int i = 0; i < puts; i++) {
                long t = System.nanoTime();
                map.put("w" + w + "-" + i, value);
                took[next.getAndIncrement()] = System.nanoTime() - t;
            }
        });
        double secs = (System.nanoTime() - start) / 1e9;
        Arrays.sort(took);
        System.out.printf(Locale.ROOT,
                "{\"system\":\"hazelcast+filemapstore\",\"workload\":\"write\",\"writers\":%d,\"puts\":%d,\"puts_per_sec\":%.1f,\"p50_ms\":%.3f,\"p90_ms\":%.3f,\"store_failures\":%d}%n",
                writers, writers * puts, writers * puts / secs, took[took.length / 2] / 1e6, took[took.length * 9 / 10] / 1e6,
                SeaTunnelStyleMapStore.failures());
        hz.shutdown();
    }

    static void load(Properties props, int entries, Value value) throws Exception {
        String name = "bench_load";
        HazelcastInstance hz = member(props, name);
        IMap<String, Value> map = hz.getMap(name);
        Map<String, Value> batch = new HashMap<>();
        for (int i = 0; i < entries; i++) {
            batch.put(key(i), value);
            if (batch.size() == 1000 || i == entries - 1) {
                map.putAll(batch);
                batch.clear();
            }
        }
        hz.shutdown();
        long start = System.nanoTime();
        hz = member(props, name);
        int got = hz.getMap(name).size();
        double secs = (System.nanoTime() - start) / 1e9;
        // A load that holds fewer entries than were put is reported, not
        // hidden: "loaded" below "entries".
        System.out.printf(Locale.ROOT,
                "{\"system\":\"hazelcast+filemapstore\",\"workload\":\"load\",\"entries\":%d,\"loaded\":%d,\"load_ms\":%.1f,\"entries_per_sec\":%.1f,\"store_failures\":%d}%n",
                entries, got, secs * 1e3, got / secs, SeaTunnelStyleMapStore.failures());
        hz.shutdown();
    }

    static void overwrite(Properties props, int writers, int keys, int rounds, Value value) throws Exception {
        String name = "bench_overwrite";
        HazelcastInstance hz = member(props, name);
        IMap<String, Value> map = hz.getMap(name);
        parallel(writers, w -> {
            for (int r = 0; r < rounds; r++) {
                for (int k = w; k < keys; k += writers) {
                    map.put(key(k), value);
                }
            }
        });
        hz.shutdown();
        long live = 0;
        for (int k = 0; k < keys; k++) {
            live += key(k).length() + value.data.length;
        }
        long disk = namespaceBytes(props);
        System.out.printf(Locale.ROOT,
                "{\"system\":\"hazelcast+filemapstore\",\"workload\":\"overwrite\",\"keys\":%d,\"rounds\":%d,\"live_bytes\":%d,\"disk_bytes\":%d,\"disk_per_live\":%.3f,\"store_failures\":%d}%n",
                keys, rounds, live, disk, (double) disk / live, SeaTunnelStyleMapStore.failures());
    }

    /**
     * The bytes of the files under the namespace (the bench gives each run
     * one of its own): on the local disk every file (Hadoop's .crc
     * sidecars too), on HDFS their length (one replica).
     */
    static long namespaceBytes(Properties props) throws IOException {
        String dir = props.getProperty("namespace");
        String fsURI = props.getProperty("fs.defaultFS");
        if (fsURI.startsWith("file:")) {
            try (Stream<Path> s = Files.walk(Path.of(dir))) {
                return s.filter(Files::isRegularFile).mapToLong(p -> p.toFile().length()).sum();
            }
        }
        Configuration conf = new Configuration();
        for (String k : props.stringPropertyNames()) {
            if (k.startsWith("seatunnel.hadoop.")) {
                conf.set(k.substring("seatunnel.hadoop.".length()), props.getProperty(k));
            }
        }
        FileSystem fs = FileSystem.get(java.net.URI.create(fsURI), conf);
        return fs.getContentSummary(new org.apache.hadoop.fs.Path(dir)).getLength();
    }

    /** The key of entry i, as stowage's bench names it. */
    static String key(int i) {
        return "job-0-key-" + i;
    }

    interface Writer {
        void run(int w) throws Exception;
    }

    static void parallel(int writers, Writer fn) throws Exception {
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Thread[] ts = new Thread[writers];
        for (int w = 0; w < writers; w++) {
            final int id = w;
            ts[w] = new Thread(() -> {
                try {
                    fn.run(id);
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
            throw new IllegalStateException("a writer failed", failed.get());
        }
    }
}
