package stowage.peers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;

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
 */
public final class SeaTunnelStyleMapStore implements MapStore<Object, Object>, MapLoaderLifecycleSupport {
    private IMapStorage storage;

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
        storage.store(key, value);
    }

    @Override
    public void storeAll(Map<Object, Object> entries) {
        storage.storeAll(entries);
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
