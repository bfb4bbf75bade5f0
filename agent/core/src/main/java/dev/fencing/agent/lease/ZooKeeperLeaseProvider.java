package dev.fencing.agent.lease;

import static dev.fencing.agent.lease.ZooKeeperLockRecipe.await;

import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.log.AgentLog;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

/**
 * ZooKeeper through the plain client. A "lease" is a ZooKeeper session: granted when the session is established
 * (its TTL is the negotiated session timeout), kept alive by a {@code sync} round trip whose answer reports the
 * timeout less the time since the previous answered keepalive was sent (see {@link #keepAlive}), so the keeper's
 * deadline never outlives the leader's view of the session; revoked by closing the session (which deletes its
 * ephemeral nodes).
 *
 * <p>The lock is ZooKeeper's lock recipe ({@link ZooKeeperLockRecipe}): an ephemeral sequential node
 * {@code <path>/<lock>/lock-<seq>} holding the holder id; the lowest sequence holds, every other candidate watches
 * only its predecessor (no herd). The token is the lock node's czxid: a zxid, totally ordered across the ensemble
 * and never reused by it (the sequence suffix is per parent and restarts when the parent is re-created). The
 * ensemble's identity for token-reuse detection is the czxid of {@code <path>}, created once: a wiped ensemble
 * re-creates it with another czxid.
 *
 * <p>The client is configured by {@link ZooKeeperClientConfig}, never from the host's {@code zookeeper.*} system
 * properties (which belong to the application's own ZooKeeper client, whose classes are not ours): SASL off, the
 * socket and TLS settings from fencing.zookeeper.*.
 */
public final class ZooKeeperLeaseProvider implements LeaseProvider {
  private static final AgentLog LOG = AgentLog.get(ZooKeeperLeaseProvider.class);

  private final ZooKeeperClientConfig client;
  private final ZooKeeperLockRecipe recipe;
  private final String root;
  private final Duration closeTimeout;
  private final List<Runnable> expiryListeners = new CopyOnWriteArrayList<>();
  private ZooKeeper zk; // guarded by this; the current session
  private boolean leased; // guarded by this; the current session was handed out by grant()
  private volatile long identity; // czxid of the root node, read by clusterId()
  private long lastAnsweredSent; // guarded by this; nanoTime the last answered keepalive (or the session request) was sent

  public ZooKeeperLeaseProvider(AgentConfig config) throws IOException {
    this.client = new ZooKeeperClientConfig(config);
    this.recipe = new ZooKeeperLockRecipe(client);
    this.root = config.zookeeperPath();
    this.closeTimeout = config.shutdownTimeout();
  }

  /** The current session, connecting a new one when there is none (or it is closed or expired). */
  private ZooKeeper session(Duration timeout) throws Exception {
    synchronized (this) {
      if (zk != null && zk.getState().isAlive()) {
        return zk;
      }
      closeCurrent();
    }
    CountDownLatch connected = new CountDownLatch(1);
    Watcher watcher = event -> {
      if (event.getType() != Watcher.Event.EventType.None) {
        return;
      }
      if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
        connected.countDown();
      } else if (event.getState() == Watcher.Event.KeeperState.Expired) {
        LOG.debug("ZooKeeper session expired");
        for (Runnable r : expiryListeners) {
          r.run();
        }
      }
    };
    long requested = System.nanoTime();
    ZooKeeper z = client.open(watcher);
    if (!connected.await(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      closeQuietly(z, Duration.ofMillis(100));
      throw new TimeoutException("no ZooKeeper server of " + client.connect() + " (fencing.zookeeper.connect)"
          + " established a session within " + timeout.toMillis() + " ms" + client.tlsHint());
    }
    synchronized (this) {
      zk = z;
      leased = false;
      lastAnsweredSent = requested; // the server cannot have started the session before it was requested
    }
    return z;
  }

  private void closeCurrent() {
    // guarded by this
    if (zk != null) {
      closeQuietly(zk, Duration.ofMillis(200));
      zk = null;
    }
  }

  private static void closeQuietly(ZooKeeper z, Duration timeout) {
    try {
      z.close((int) Math.max(1, timeout.toMillis()));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException ignored) {
      // closing a broken connection may fail; the session lapses by itself
    }
  }

  @Override
  public long clusterId(Duration timeout) throws Exception {
    ZooKeeper z = session(timeout);
    await(recipe.ensurePath(z, root), timeout, root);
    // A write proves this session may change the tree under the root (exists() needs no permission at all): wrong
    // credentials fail here, before campaigning, as a clear error rather than a candidate that can never lock.
    CompletableFuture<Stat> written = new CompletableFuture<>();
    z.setData(root, new byte[0], -1, (rc, path, ctx, stat) -> recipe.complete(written, rc, stat, root), null);
    identity = await(written, timeout, root).getCzxid();
    return identity;
  }

  @Override
  public Lease grant(Duration ttl, Duration timeout) throws Exception {
    ZooKeeper z;
    synchronized (this) {
      if (leased) {
        closeCurrent(); // a session's ephemeral nodes belong to one lease: never hand a used session out again
      }
    }
    z = session(timeout);
    synchronized (this) {
      leased = true;
    }
    int negotiated = z.getSessionTimeout();
    if (negotiated < 2_000) {
      throw new IllegalStateException("ZooKeeper negotiated a session timeout of " + negotiated + " ms (the server's "
          + "minSessionTimeout..maxSessionTimeout bound fencing.zookeeper.session-timeout); at least 2 s is needed");
    }
    long since;
    synchronized (this) {
      since = System.nanoTime() - lastAnsweredSent;
    }
    // The keeper counts this TTL from just before grant(); the session may have been requested a little earlier.
    long left = TimeUnit.MILLISECONDS.toNanos(negotiated) - since;
    return new Lease(z.getSessionId(), Math.max(1, TimeUnit.NANOSECONDS.toSeconds(left)));
  }

  /** Records an answered keepalive sent at {@code sent}; returns the send time of the one answered before it. */
  private synchronized long answered(long sent) {
    long previous = lastAnsweredSent;
    if (sent - lastAnsweredSent > 0) {
      lastAnsweredSent = sent;
    }
    return previous;
  }

  private synchronized ZooKeeper sessionOf(long leaseId) {
    return zk != null && leased && zk.getSessionId() == leaseId ? zk : null;
  }

  @Override
  public CompletableFuture<Long> keepAlive(long leaseId) {
    ZooKeeper z = sessionOf(leaseId);
    if (z == null || !z.getState().isAlive()) {
      return CompletableFuture.completedFuture(0L); // closed or expired: the lease is gone
    }
    long timeoutNanos = TimeUnit.MILLISECONDS.toNanos(z.getSessionTimeout());
    long sent = System.nanoTime();
    CompletableFuture<Long> f = new CompletableFuture<>();
    // sync goes through the ensemble's leader: an answer proves the server we talk to still follows one (a
    // partitioned follower cannot answer it). But the leader counts our session from what the follower reports in
    // its pings, and this sync's own visit may not be reported yet (the follower could lose the leader right after
    // answering): what the leader has surely heard of is the previous answered keepalive, forwarded on the same
    // connection before this one. So the time left is counted from that one's send time, not this one's.
    z.sync(root, (rc, path, ctx) -> {
      KeeperException.Code code = KeeperException.Code.get(rc);
      if (code == KeeperException.Code.OK) {
        long previous = answered(sent);
        f.complete(Math.max(0, TimeUnit.NANOSECONDS.toSeconds(timeoutNanos - (sent - previous))));
      } else if (code == KeeperException.Code.SESSIONEXPIRED) {
        f.complete(0L);
      } else {
        f.completeExceptionally(KeeperException.create(code, path));
      }
    }, null);
    return f;
  }

  @Override
  public CompletableFuture<Acquired> campaign(String lock, long leaseId, String holderId) {
    CompletableFuture<Acquired> f = new CompletableFuture<>();
    ZooKeeper z = sessionOf(leaseId);
    if (z == null) {
      f.completeExceptionally(new IllegalStateException("the ZooKeeper session " + Long.toHexString(leaseId)
          + " is closed"));
      return f;
    }
    recipe.campaign(z, root + "/" + lock, holderId, identity, f);
    return f;
  }

  @Override
  public AutoCloseable watchDeletion(Acquired acquired, Runnable onDeleted) {
    ZooKeeper z;
    synchronized (this) {
      z = zk;
    }
    AtomicBoolean done = new AtomicBoolean();
    Runnable fire = () -> {
      if (done.compareAndSet(false, true)) {
        onDeleted.run();
      }
    };
    // Expiry deletes the node on the ensemble: LOST at once, as soon as the client hears of it.
    expiryListeners.add(fire);
    if (z == null) {
      fire.run();
    } else {
      recipe.watchNode(z, acquired.key, fire, done);
    }
    return () -> {
      done.set(true);
      expiryListeners.remove(fire);
    };
  }

  @Override
  public boolean revoke(long leaseId, Duration timeout) {
    ZooKeeper z;
    synchronized (this) {
      z = sessionOf(leaseId);
      if (z != null) {
        zk = null;
        leased = false;
      }
    }
    if (z != null) {
      closeQuietly(z, timeout); // ends the session: ZooKeeper deletes its lock node
    }
    // The handle is closed either way; an ensemble that did not hear the close expires the session by itself.
    return true;
  }

  @Override
  public long revision(Duration timeout) throws Exception {
    ZooKeeper z = session(timeout);
    await(recipe.ensurePath(z, root), timeout, root);
    // A write's zxid is the ensemble's newest: every lock node created so far has a lower czxid, every later one a
    // higher. The root's data is not used for anything else.
    CompletableFuture<Stat> f = new CompletableFuture<>();
    z.setData(root, new byte[0], -1, (rc, path, ctx, stat) -> recipe.complete(f, rc, stat, root), null);
    return await(f, timeout, root).getMzxid();
  }

  @Override
  public Optional<Holder> holder(String lock, Duration timeout) throws Exception {
    return recipe.holder(session(timeout), root + "/" + lock, timeout);
  }

  @Override
  public void close() {
    ZooKeeper z;
    synchronized (this) {
      z = zk;
      zk = null;
    }
    if (z != null) {
      closeQuietly(z, closeTimeout);
    }
  }
}
