package dev.fencing.agent.lease;

import dev.fencing.agent.config.AgentConfig;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.LeaseOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.file.FileSystemOptions;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * etcd through jetcd. The lock is an etcd election: the key {@code <prefix><lock>/<lease id>} holds the holder id,
 * is attached to the lease, and the lowest create revision under the prefix holds the lock. The fencing token is that
 * key's create revision (read back from the key, not taken from the response header).
 */
public final class EtcdLeaseProvider implements LeaseProvider {
  private final Client client;
  private final String keyPrefix;

  public EtcdLeaseProvider(AgentConfig config) throws IOException {
    this.keyPrefix = config.etcdKeyPrefix();
    ClientBuilder b = Client.builder()
        .endpoints(config.etcdEndpoints().toArray(new java.net.URI[0]))
        .connectTimeout(config.etcdTimeout())
        // The lease keeper retries on its own schedule, bounded by the lease deadline: no long hidden retries here.
        .retryMaxDuration(config.etcdTimeout())
        .waitForReady(false);
    if (config.etcdUser() != null && config.etcdPasswordFile() != null) {
      String password = Files.readAllLines(config.etcdPasswordFile(), StandardCharsets.UTF_8).stream().findFirst().orElse("");
      b.user(bytes(config.etcdUser())).password(bytes(password.trim()));
    }
    if (config.etcdTlsCa() != null || config.etcdTlsCert() != null) {
      b.sslContext(ssl -> {
        if (config.etcdTlsCa() != null) {
          ssl.trustManager(config.etcdTlsCa().toFile());
        }
        if (config.etcdTlsCert() != null) {
          ssl.keyManager(config.etcdTlsCert().toFile(), config.etcdTlsKey().toFile());
        }
      });
    }
    // jetcd would create a Vert.x instance with default options: a file cache directory (/tmp/vertx-cache-<UUID>,
    // left behind when the JVM is killed, and a SecureRandom initialised to name it), class path resolving, pools
    // sized for a server. The agent needs one connection to etcd: one event loop, no file system features. jetcd
    // closes this instance with the client.
    Vertx vertx = Vertx.vertx(new VertxOptions()
        .setUseDaemonThread(true) // as jetcd's own: never keep the application's JVM alive
        .setEventLoopPoolSize(1)
        .setWorkerPoolSize(1)
        .setInternalBlockingPoolSize(1)
        .setFileSystemOptions(new FileSystemOptions().setFileCachingEnabled(false).setClassPathResolvingEnabled(false)));
    try {
      this.client = b.vertx(vertx).build();
    } catch (RuntimeException | Error e) {
      vertx.close();
      throw e;
    }
  }

  static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }

  private ByteSequence electionName(String lock) {
    return bytes(keyPrefix + lock);
  }

  @Override
  public long clusterId(Duration timeout) throws Exception {
    return client.getClusterClient().listMember().get(timeout.toMillis(), TimeUnit.MILLISECONDS).getHeader().getClusterId();
  }

  @Override
  public Lease grant(Duration ttl, Duration timeout) throws Exception {
    var r = client.getLeaseClient().grant(ttl.toSeconds()).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    return new Lease(r.getID(), r.getTTL());
  }

  @Override
  public CompletableFuture<Long> keepAlive(long leaseId) {
    return client.getLeaseClient().keepAliveOnce(leaseId).thenApply(r -> r.getTTL());
  }

  @Override
  public CompletableFuture<Acquired> campaign(String lock, long leaseId, String holderId) {
    return client.getElectionClient().campaign(electionName(lock), leaseId, bytes(holderId))
        .thenCompose(r -> {
          ByteSequence key = r.getLeader().getKey();
          return client.getKVClient().get(key).thenApply(get -> acquired(key, get));
        });
  }

  private static Acquired acquired(ByteSequence key, GetResponse get) {
    List<KeyValue> kvs = get.getKvs();
    if (kvs.isEmpty()) {
      throw new IllegalStateException("the lock key " + key.toString(StandardCharsets.UTF_8)
          + " vanished right after the campaign (lease expired while waiting?)");
    }
    return new Acquired(kvs.get(0).getCreateRevision(), get.getHeader().getClusterId(), key.toString(StandardCharsets.UTF_8));
  }

  @Override
  public AutoCloseable watchDeletion(Acquired acquired, Runnable onDeleted) {
    AtomicBoolean fired = new AtomicBoolean();
    WatchOption from = WatchOption.builder().withRevision(acquired.token).build();
    Watch.Watcher watcher = client.getWatchClient().watch(bytes(acquired.key), from, Watch.listener(response -> {
      for (WatchEvent e : response.getEvents()) {
        if (e.getEventType() == WatchEvent.EventType.DELETE && fired.compareAndSet(false, true)) {
          onDeleted.run();
        }
      }
    }, error -> {
      // Watch errors are not losses: keepalives and the local deadline decide liveness.
    }));
    return watcher::close;
  }

  @Override
  public void revoke(long leaseId, Duration timeout) {
    try {
      client.getLeaseClient().revoke(leaseId).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      // best effort: the lease lapses by itself after its TTL
    }
  }

  @Override
  public long revision(Duration timeout) throws Exception {
    // A linearizable read (jetcd's default) of any key: its header carries the store's current revision.
    return client.getKVClient().get(bytes(keyPrefix)).get(timeout.toMillis(), TimeUnit.MILLISECONDS).getHeader()
        .getRevision();
  }

  @Override
  public Optional<Holder> holder(String lock, Duration timeout) throws Exception {
    long ms = timeout.toMillis();
    try {
      KeyValue kv = client.getElectionClient().leader(electionName(lock)).get(ms, TimeUnit.MILLISECONDS).getKv();
      if (kv == null) {
        return Optional.empty();
      }
      long ttl = kv.getLease() == 0 ? -1
          : client.getLeaseClient().timeToLive(kv.getLease(), LeaseOption.DEFAULT).get(ms, TimeUnit.MILLISECONDS).getTTL();
      return Optional.of(new Holder(kv.getValue().toString(StandardCharsets.UTF_8), kv.getCreateRevision(), kv.getLease(), ttl));
    } catch (java.util.concurrent.ExecutionException e) {
      // jetcd fails the leader call with NoLeaderException when nobody holds the lock (its message varies).
      if (e.getCause() instanceof io.etcd.jetcd.election.NoLeaderException
          || String.valueOf(e.getCause()).contains("no leader")) {
        return Optional.empty();
      }
      throw e;
    }
  }

  @Override
  public void close() {
    client.close();
  }
}
