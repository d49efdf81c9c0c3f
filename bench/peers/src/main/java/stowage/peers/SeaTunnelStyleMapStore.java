package stowage.peers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.MapLoaderLifecycleSupport;
import com.hazelcast.map.MapStore;

import org.apache.seatunnel.engine.imap.storage.api.IMapStorage;
import org.apache.seatunnel.engine.imap.storage.file.IMapFileStorageFactory;

/**
 * A Hazelcast MapStore that delegates to SeaTunnel's IMapFileStorage the
 * way the engine's {@code FileMapStore} does (read in SeaTunnel's source,
 * written anew here): the map store's properties, plus
 * {@code businessName} set to the map's name as the engine's factory
 * does, create the storage at init; store, storeAll, delete and deleteAll
 * go straight to it; load of one key answers nothing; loadAll(keys) reads
 * every entry of the map from the files and picks the keys asked for (so
 * an EAGER load reads the whole map once per batch of keys Hazelcast asks
 * for); loadAllKeys lists the keys from the files; destroy closes the
 * storage without deleting its files.
 *
 * <p>Like the engine's, it ignores what the storage answers (store's
 * false, the keys storeAll could not write): Hazelcast takes the entry as
 * stored. It only counts them, for the bench to report.
 */
public final class SeaTunnelStyleMapStore implements MapStore<Object, Object>, MapLoaderLifecycleSupport {
    private static final AtomicLong FAILURES = new AtomicLong();

    private IMapStorage storage;

    /** The stores and the entries of storeAll calls the storage said it could not write, in this JVM. */
    static long failures() {
        return FAILURES.get();
    }

    @Override
    public void init(HazelcastInstance hz, Properties properties, String mapName) {
        Map<String, Object> conf = new HashMap<>();
        for (String k : properties.stringPropertyNames()) {
            conf.put(k, properties.getProperty(k));
        }
        conf.put("businessName", mapName);
        storage = new IMapFileStorageFactory().create(conf);
    }

    @Override
    public void destroy() {
        storage.destroy(false);
    }

    @Override
    public void store(Object key, Object value) {
        if (!storage.store(key, value)) {
            FAILURES.incrementAndGet();
        }
    }

    @Override
    public void storeAll(Map<Object, Object> entries) {
        Set<Object> failed = storage.storeAll(entries);
        if (failed != null) {
            FAILURES.addAndGet(failed.size());
        }
    }

    @Override
    public void delete(Object key) {
        storage.delete(key);
    }

    @Override
    public void deleteAll(Collection<Object> keys) {
        storage.deleteAll(keys);
    }

    @Override
    public Object load(Object key) {
        return null;
    }

    @Override
    public Map<Object, Object> loadAll(Collection<Object> keys) {
        Map<Object, Object> all;
        try {
            all = storage.loadAll();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Map<Object, Object> out = new HashMap<>();
        for (Object k : keys) {
            out.put(k, all.get(k));
        }
        return Collections.unmodifiableMap(out);
    }

    @Override
    public Iterable<Object> loadAllKeys() {
        return storage.loadAllKeys();
    }
}
