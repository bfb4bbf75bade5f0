package dev.fencing.agent.lease;

import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.log.AgentLog;
import dev.fencing.agent.threads.AgentThreads;
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
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * etcd through jetcd. The lock is an etcd election: the key {@code <prefix><lock>/<lease id>} holds the holder id,
 * is attached to the lease, and the lowest create revision under the prefix holds the lock. The fencing token is that
 * key's create revision (read back from the key, not taken from the response header).
 */
public final class EtcdLeaseProvider implements LeaseProvider {
  private static final AgentLog LOG = AgentLog.get(EtcdLeaseProvider.class);
  private static final long WATCH_RETRY_MIN_MILLIS = 250;
  private static final long WATCH_RETRY_MAX_MILLIS = 2_000;

  private final Client client;
  private final EtcdTransport transport; // null when jetcd built its own channel
  private final String keyPrefix;
  private ScheduledExecutorService watchRetries; // guarded by this; created on the first watch error

  public EtcdLeaseProvider(AgentConfig config) throws IOException {
    this(config, true);
  }

  /**
   * {@code ownChannel}: whether to put jetcd on the agent's channel ({@link EtcdTransport}) when the bundled jetcd
   * takes it; false builds jetcd's own Vert.x channel, the path of a jetcd whose channel cannot be set (tests only).
   */
  EtcdLeaseProvider(AgentConfig config, boolean ownChannel) throws IOException {
    this.keyPrefix = config.etcdKeyPrefix();
    ClientBuilder b = Client.builder()
        .endpoints(config.etcdEndpoints().toArray(new java.net.URI[0]))
        .connectTimeout(config.etcdTimeout())
        // The lease keeper retries on its own schedule, bounded by the lease deadline: no long hidden retries here.
        .retryMaxDuration(config.etcdTimeout())
        // jetcd refuses a max duration not above its first retry delay (500 ms by default): a short etcd.timeout
        // would fail every request with "maxDuration must be > the delay".
        .retryChronoUnit(java.time.temporal.ChronoUnit.MILLIS)
        .retryDelay(Math.max(1, Math.min(500, config.etcdTimeout().toMillis() / 4)))
        .retryMaxDelay(Math.max(1, Math.min(2500, config.etcdTimeout().toMillis() / 2)))
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
    EtcdTransport own = ownChannel ? EtcdTransport.open(b) : null;
    if (own != null) {
      this.transport = own;
      this.client = own.client();
      return;
    }
    // A jetcd whose channel cannot be set builds its own on a Vert.x instance, which by default has a file cache
    // directory (/tmp/vertx-cache-<UUID>, left behind when the JVM is killed, and a SecureRandom initialised to name
    // it), class path resolving, pools sized for a server. One event loop, no file system features; jetcd closes this
    // instance with the client.
    this.transport = null;
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
    CompletableFuture<Long> f = new CompletableFuture<>();
    client.getLeaseClient().keepAliveOnce(leaseId).whenComplete((r, e) -> {
      if (e == null) {
        f.complete(r.getTTL());
      } else if (leaseNotFound(e)) {
        f.complete(0L); // jetcd fails a keepalive that etcd answered with TTL 0: the lease is gone
      } else {
        f.completeExceptionally(e);
      }
    });
    return f;
  }

  private static boolean leaseNotFound(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (String.valueOf(t.getMessage()).contains("requested lease not found")) {
        return true;
      }
    }
    return false;
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
    DeletionWatch w = new DeletionWatch(acquired, onDeleted);
    w.watchFrom(acquired.token);
    return w;
  }

  /**
   * Watches the lock key for its deletion, and keeps watching whatever happens to the watch stream. jetcd resumes a
   * broken stream on its own for most errors, but it ends the watch for good on others: the start revision compacted
   * away (an etcd restart after a compaction), no leader, a halt error. An ended watch would leave a holder whose key
   * an operator deleted believing it holds the lock while its lease is still kept alive: a second holder. So every
   * error ends the jetcd watcher, and after a short pause the key is read again: gone, or re-created by another
   * lease (another create revision), is a deletion; still ours, the watch starts again just after the read's revision,
   * so no event between the read and the new watch is missed.
   */
  private final class DeletionWatch implements AutoCloseable {
    private final Acquired acquired;
    private final Runnable onDeleted;
    private final AtomicBoolean fired = new AtomicBoolean();
    private volatile boolean closed;
    private Watch.Watcher watcher; // guarded by this
    private int generation; // guarded by this; a stale watcher's late error is ignored
    private volatile long retryMillis = WATCH_RETRY_MIN_MILLIS;

    DeletionWatch(Acquired acquired, Runnable onDeleted) {
      this.acquired = acquired;
      this.onDeleted = onDeleted;
    }

    synchronized void watchFrom(long revision) {
      if (closed || fired.get()) {
        return;
      }
      int gen = ++generation;
      WatchOption from = WatchOption.builder().withRevision(revision).build();
      watcher = client.getWatchClient().watch(bytes(acquired.key), from, Watch.listener(response -> {
        for (WatchEvent e : response.getEvents()) {
          if (e.getEventType() == WatchEvent.EventType.DELETE) {
            fire();
          }
        }
      }, error -> failed(gen, error)));
    }

    private void failed(int gen, Throwable error) {
      Watch.Watcher broken;
      synchronized (this) {
        if (closed || gen != generation) {
          return;
        }
        generation++; // whatever jetcd does with this watcher now, its news no longer counts
        broken = watcher;
        watcher = null;
      }
      LOG.debug("watch of lock key " + acquired.key + " failed (" + AgentLog.describe(error) + "); watching again");
      // Not on jetcd's thread: closing the watcher from inside its own error callback would race its resume.
      schedule(() -> {
        closeQuietly(broken);
        recheck();
      });
    }

    private void recheck() {
      if (closed || fired.get()) {
        return;
      }
      client.getKVClient().get(bytes(acquired.key)).whenComplete((get, error) -> {
        if (closed) {
          return;
        }
        if (error != null) {
          retryMillis = Math.min(retryMillis * 2, WATCH_RETRY_MAX_MILLIS);
          schedule(this::recheck); // etcd unreachable: the lease deadline decides meanwhile
          return;
        }
        retryMillis = WATCH_RETRY_MIN_MILLIS;
        List<KeyValue> kvs = get.getKvs();
        if (kvs.isEmpty() || kvs.get(0).getCreateRevision() != acquired.token) {
          fire();
        } else {
          watchFrom(get.getHeader().getRevision() + 1);
        }
      });
    }

    private void fire() {
      if (!closed && fired.compareAndSet(false, true)) {
        onDeleted.run();
      }
    }

    private void schedule(Runnable task) {
      try {
        watchRetries().schedule(task, retryMillis, TimeUnit.MILLISECONDS);
      } catch (java.util.concurrent.RejectedExecutionException e) {
        // the provider is closing
      }
    }

    @Override
    public void close() {
      Watch.Watcher w;
      synchronized (this) {
        closed = true;
        w = watcher;
        watcher = null;
      }
      closeQuietly(w);
    }
  }

  private static void closeQuietly(Watch.Watcher w) {
    if (w != null) {
      try {
        w.close();
      } catch (RuntimeException ignored) {
        // closing a watch on a broken connection may fail; nothing to do
      }
    }
  }

  private synchronized ScheduledExecutorService watchRetries() {
    if (watchRetries == null) {
      watchRetries = Executors.newSingleThreadScheduledExecutor(AgentThreads.factory("fencing-agent-watch"));
    }
    return watchRetries;
  }

  @Override
  public boolean revoke(long leaseId, Duration timeout) {
    try {
      client.getLeaseClient().revoke(leaseId).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (Exception e) {
      // Gone already (expired, or revoked by an earlier try whose answer was lost): nothing is left to revoke.
      return String.valueOf(e.getMessage()).contains("requested lease not found");
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
  public void reconnect() {
    EtcdChannel.reconnectNow(client);
  }

  @Override
  public void close() {
    ScheduledExecutorService w;
    synchronized (this) {
      w = watchRetries;
    }
    if (w != null) {
      w.shutdownNow();
    }
    if (transport != null) {
      transport.close();
    } else {
      client.close();
    }
  }
}
