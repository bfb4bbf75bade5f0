package dev.fencing.agent.lease;

import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.log.AgentLog;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.zookeeper.ClientCnxnSocketNIO;
import org.apache.zookeeper.ClientCnxnSocketNetty;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.common.ClientX509Util;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;

/**
 * ZooKeeper through the plain client. A "lease" is a ZooKeeper session: granted when the session is established
 * (its TTL is the negotiated session timeout), kept alive by a {@code sync} round trip whose answer reports the
 * timeout less the time since the previous answered keepalive was sent (see {@link #keepAlive}), so the keeper's
 * deadline never outlives the leader's view of the session; revoked by closing the session (which deletes its
 * ephemeral nodes).
 *
 * <p>The lock is ZooKeeper's lock recipe: an ephemeral sequential node {@code <path>/<lock>/lock-<seq>} holding the
 * holder id; the lowest sequence holds, every other candidate watches only its predecessor (no herd). The token is
 * the lock node's czxid: a zxid, totally ordered across the ensemble and never reused by it (the sequence suffix is
 * per parent and restarts when the parent is re-created). The ensemble's identity for token-reuse detection is the
 * czxid of {@code <path>}, created once: a wiped ensemble re-creates it with another czxid.
 *
 * <p>The client is configured here, never from the host's {@code zookeeper.*} system properties (which belong to the
 * application's own ZooKeeper client, whose classes are not ours): SASL off, the socket and TLS settings from
 * fencing.zookeeper.*.
 */
public final class ZooKeeperLeaseProvider implements LeaseProvider {
  private static final AgentLog LOG = AgentLog.get(ZooKeeperLeaseProvider.class);
  private static final String NODE_PREFIX = "lock-";

  private final String connect;
  private final String root;
  private final int sessionTimeoutMs;
  private final ZKClientConfig clientConfig;
  /** What a session that never came up over TLS may mean, for the FAILED detail ("" without TLS). */
  private final String tlsHint;
  private final byte[] auth;
  private final String authUser;
  private final List<ACL> acl;
  private final Duration closeTimeout;
  private final List<Runnable> expiryListeners = new CopyOnWriteArrayList<>();
  private ZooKeeper zk; // guarded by this; the current session
  private boolean leased; // guarded by this; the current session was handed out by grant()
  private volatile long identity; // czxid of the root node, read by clusterId()
  private long lastAnsweredSent; // guarded by this; nanoTime the last answered keepalive (or the session request) was sent

  public ZooKeeperLeaseProvider(AgentConfig config) throws IOException {
    this.connect = config.zookeeperConnect();
    this.root = config.zookeeperPath();
    this.sessionTimeoutMs = (int) Math.min(Integer.MAX_VALUE, config.zookeeperSessionTimeout().toMillis());
    this.closeTimeout = config.shutdownTimeout();
    ZKClientConfig c = new ZKClientConfig();
    c.setProperty(ZKClientConfig.ENABLE_CLIENT_SASL_KEY, "false");
    if (config.zookeeperTruststore() != null) {
      c.setProperty(ZKClientConfig.SECURE_CLIENT, "true");
      // Class objects, not names: the shaded jar relocates these classes, and a name in a string would not follow.
      c.setProperty(ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET, ClientCnxnSocketNetty.class.getName());
      try (ClientX509Util x509 = new ClientX509Util()) {
        c.setProperty(x509.getSslTruststoreLocationProperty(), config.zookeeperTruststore().toString());
        c.setProperty(x509.getSslTruststoreTypeProperty(), StoreType.of(config.zookeeperTruststore()));
        c.setProperty(x509.getSslTruststorePasswdProperty(), firstLine(config.zookeeperTruststorePasswordFile()));
        if (config.zookeeperKeystore() != null) {
          c.setProperty(x509.getSslKeystoreLocationProperty(), config.zookeeperKeystore().toString());
          c.setProperty(x509.getSslKeystoreTypeProperty(), StoreType.of(config.zookeeperKeystore()));
          c.setProperty(x509.getSslKeystorePasswdProperty(), firstLine(config.zookeeperKeystorePasswordFile()));
        }
      }
    } else {
      c.setProperty(ZKClientConfig.SECURE_CLIENT, "false");
      c.setProperty(ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET, ClientCnxnSocketNIO.class.getName());
    }
    this.clientConfig = c;
    this.tlsHint = config.zookeeperTruststore() == null ? "" : "; over TLS: check that these are the servers' secure"
        + " client ports (secureClientPort), that fencing.zookeeper.tls.truststore (" + config.zookeeperTruststore()
        + ") holds the CA that signed their certificates and, if they require client authentication, that"
        + " fencing.zookeeper.tls.keystore " + (config.zookeeperKeystore() == null ? "is set (it is not)"
            : "(" + config.zookeeperKeystore() + ") holds a certificate they trust")
        + "; the TLS handshake's own error is in the agent's log";
    if (config.zookeeperAuthFile() != null) {
      String line = firstLine(config.zookeeperAuthFile());
      int colon = line.indexOf(':');
      if (colon <= 0) {
        throw new IOException(config.zookeeperAuthFile() + " (fencing.zookeeper.auth-file): expected user:password on "
            + "its first line");
      }
      this.authUser = line.substring(0, colon);
      this.auth = line.getBytes(StandardCharsets.UTF_8);
      this.acl = ZooDefs.Ids.CREATOR_ALL_ACL;
    } else {
      this.authUser = null;
      this.auth = null;
      this.acl = ZooDefs.Ids.OPEN_ACL_UNSAFE;
    }
  }

  private static String firstLine(Path file) throws IOException {
    if (file == null) {
      return "";
    }
    return Files.readAllLines(file, StandardCharsets.UTF_8).stream().findFirst().orElse("").trim();
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
    ZooKeeper z = new ZooKeeper(connect, sessionTimeoutMs, watcher, clientConfig);
    if (auth != null) {
      z.addAuthInfo("digest", auth); // sent before any request of this session, and again on every reconnect
    }
    if (!connected.await(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      closeQuietly(z, Duration.ofMillis(100));
      throw new TimeoutException("no ZooKeeper server of " + connect + " (fencing.zookeeper.connect) established a "
          + "session within " + timeout.toMillis() + " ms" + tlsHint);
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
    await(ensurePath(z, root), timeout, root);
    // A write proves this session may change the tree under the root (exists() needs no permission at all): wrong
    // credentials fail here, before campaigning, as a clear error rather than a candidate that can never lock.
    CompletableFuture<Stat> written = new CompletableFuture<>();
    z.setData(root, new byte[0], -1, (rc, path, ctx, stat) -> complete(written, rc, stat, root), null);
    identity = await(written, timeout, root).getCzxid();
    return identity;
  }

  /** Creates {@code path} and its missing parents (persistent); completes with its stat. */
  private CompletableFuture<Stat> ensurePath(ZooKeeper z, String path) {
    CompletableFuture<Stat> f = new CompletableFuture<>();
    z.exists(path, false, (rc, p, ctx, stat) -> {
      KeeperException.Code code = KeeperException.Code.get(rc);
      if (code == KeeperException.Code.OK) {
        f.complete(stat);
      } else if (code == KeeperException.Code.NONODE) {
        int slash = path.lastIndexOf('/');
        CompletableFuture<Stat> parent = slash <= 0 ? CompletableFuture.completedFuture(null)
            : ensurePath(z, path.substring(0, slash));
        parent.whenComplete((ps, pe) -> {
          if (pe != null) {
            f.completeExceptionally(pe);
            return;
          }
          z.create(path, new byte[0], acl, CreateMode.PERSISTENT, (rc2, p2, ctx2, name, created) -> {
            KeeperException.Code c2 = KeeperException.Code.get(rc2);
            if (c2 == KeeperException.Code.OK) {
              f.complete(created);
            } else if (c2 == KeeperException.Code.NODEEXISTS) {
              z.exists(path, false, (rc3, p3, ctx3, s3) -> complete(f, rc3, s3, path), null);
            } else {
              f.completeExceptionally(failure(c2, path));
            }
          }, null);
        });
      } else {
        f.completeExceptionally(failure(code, path));
      }
    }, null);
    return f;
  }

  private void complete(CompletableFuture<Stat> f, int rc, Stat stat, String path) {
    KeeperException.Code code = KeeperException.Code.get(rc);
    if (code == KeeperException.Code.OK && stat != null) {
      f.complete(stat);
    } else {
      f.completeExceptionally(failure(code == KeeperException.Code.OK ? KeeperException.Code.NONODE : code, path));
    }
  }

  /** A KeeperException whose message tells an operator what to check. */
  private Exception failure(KeeperException.Code code, String path) {
    String hint;
    switch (code) {
      case NOAUTH:
        hint = auth == null
            ? "the node's ACL needs credentials: set fencing.zookeeper.auth-file (user:password)"
            : "the credentials of fencing.zookeeper.auth-file (user '" + authUser + "') are not allowed by the node's "
                + "ACL: wrong password or user?";
        break;
      case NONODE:
        hint = "a parent node is missing (the chroot of fencing.zookeeper.connect must exist)";
        break;
      case AUTHFAILED:
        hint = "the server refused the credentials of fencing.zookeeper.auth-file";
        break;
      default:
        return KeeperException.create(code, path);
    }
    // No cause: the agent's log and /status describe an error by its root cause, which would hide the hint.
    return new IOException("ZooKeeper refused " + path + " (" + code + "): " + hint);
  }

  private static <T> T await(CompletableFuture<T> f, Duration timeout, String what) throws Exception {
    try {
      return f.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      Throwable c = e.getCause();
      throw c instanceof Exception ? (Exception) c : e;
    } catch (TimeoutException e) {
      throw new TimeoutException("ZooKeeper did not answer about " + what + " within " + timeout.toMillis() + " ms");
    }
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
    String lockPath = root + "/" + lock;
    long cluster = identity;
    ensurePath(z, lockPath).whenComplete((parent, error) -> {
      if (error != null) {
        f.completeExceptionally(error);
        return;
      }
      z.create(lockPath + "/" + NODE_PREFIX, holderId.getBytes(StandardCharsets.UTF_8), acl,
          CreateMode.EPHEMERAL_SEQUENTIAL, (rc, path, ctx, name, stat) -> {
            KeeperException.Code code = KeeperException.Code.get(rc);
            if (code != KeeperException.Code.OK) {
              f.completeExceptionally(failure(code, lockPath));
              return;
            }
            new Candidate(z, lockPath, name, stat.getCzxid(), cluster, f).check();
          }, null);
    });
    return f;
  }

  /** One lock node waiting for its turn: holds when no lower sequence is left, else watches its predecessor. */
  private final class Candidate {
    private final ZooKeeper z;
    private final String lockPath;
    private final String node;
    private final long czxid;
    private final long cluster;
    private final CompletableFuture<Acquired> result;

    Candidate(ZooKeeper z, String lockPath, String node, long czxid, long cluster, CompletableFuture<Acquired> result) {
      this.z = z;
      this.lockPath = lockPath;
      this.node = node;
      this.czxid = czxid;
      this.cluster = cluster;
      this.result = result;
    }

    void check() {
      if (result.isDone()) {
        return; // cancelled: the keeper closes the session, which deletes the node
      }
      z.getChildren(lockPath, false, (rc, path, ctx, children) -> {
        KeeperException.Code code = KeeperException.Code.get(rc);
        if (code != KeeperException.Code.OK) {
          result.completeExceptionally(failure(code, lockPath));
          return;
        }
        List<String> sorted = sortedLockNodes(children);
        String own = node.substring(node.lastIndexOf('/') + 1);
        int i = sorted.indexOf(own);
        if (i < 0) {
          result.completeExceptionally(new IllegalStateException("the lock node " + node + " vanished while waiting "
              + "(session expired or node deleted)"));
        } else if (i == 0) {
          result.complete(new Acquired(czxid, cluster, node));
        } else {
          String predecessor = lockPath + "/" + sorted.get(i - 1);
          Watcher w = event -> {
            if (event.getType() == Watcher.Event.EventType.NodeDeleted) {
              check();
            } else if (event.getState() == Watcher.Event.KeeperState.Expired) {
              result.completeExceptionally(new IllegalStateException("the ZooKeeper session expired while waiting"));
            }
          };
          z.exists(predecessor, w, (rc2, p2, ctx2, stat) -> {
            KeeperException.Code c2 = KeeperException.Code.get(rc2);
            if (c2 == KeeperException.Code.NONODE || (c2 == KeeperException.Code.OK && stat == null)) {
              check(); // gone between the listing and the watch
            } else if (c2 != KeeperException.Code.OK) {
              result.completeExceptionally(failure(c2, predecessor));
            }
          }, null);
        }
      }, null);
    }
  }

  /** Lock node names ordered by their sequence suffix (ZooKeeper appends ten digits); other names are ignored. */
  static List<String> sortedLockNodes(List<String> children) {
    List<String> nodes = new ArrayList<>();
    for (String c : children) {
      if (c.startsWith(NODE_PREFIX) && c.length() > NODE_PREFIX.length()) {
        nodes.add(c);
      }
    }
    nodes.sort((a, b) -> Long.compare(sequence(a), sequence(b)));
    return nodes;
  }

  private static long sequence(String node) {
    try {
      return Long.parseLong(node.substring(NODE_PREFIX.length()));
    } catch (NumberFormatException e) {
      return Long.MAX_VALUE;
    }
  }

  @Override
  public AutoCloseable watchDeletion(Acquired acquired, Runnable onDeleted) {
    ZooKeeper z;
    synchronized (this) {
      z = zk;
    }
    java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
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
      watchNode(z, acquired.key, fire, done);
    }
    return () -> {
      done.set(true);
      expiryListeners.remove(fire);
    };
  }

  private void watchNode(ZooKeeper z, String node, Runnable fire, java.util.concurrent.atomic.AtomicBoolean done) {
    Watcher w = event -> {
      if (done.get()) {
        return;
      }
      if (event.getType() == Watcher.Event.EventType.NodeDeleted) {
        fire.run();
      } else if (event.getType() != Watcher.Event.EventType.None) {
        watchNode(z, node, fire, done); // data changed (not by the agent): watch again
      }
    };
    z.exists(node, w, (rc, path, ctx, stat) -> {
      KeeperException.Code code = KeeperException.Code.get(rc);
      if (code == KeeperException.Code.NONODE || (code == KeeperException.Code.OK && stat == null)) {
        fire.run();
      } else if (code != KeeperException.Code.OK && !done.get()) {
        // Disconnected: the keeper's deadline decides meanwhile; expiry is reported by the session watcher.
        LOG.debug("watch of lock node " + node + " failed (" + code + ")");
      }
    }, null);
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
    await(ensurePath(z, root), timeout, root);
    // A write's zxid is the ensemble's newest: every lock node created so far has a lower czxid, every later one a
    // higher. The root's data is not used for anything else.
    CompletableFuture<Stat> f = new CompletableFuture<>();
    z.setData(root, new byte[0], -1, (rc, path, ctx, stat) -> complete(f, rc, stat, root), null);
    return await(f, timeout, root).getMzxid();
  }

  @Override
  public Optional<Holder> holder(String lock, Duration timeout) throws Exception {
    ZooKeeper z = session(timeout);
    String lockPath = root + "/" + lock;
    for (int attempt = 0; attempt < 3; attempt++) {
      CompletableFuture<List<String>> children = new CompletableFuture<>();
      z.getChildren(lockPath, false, (rc, path, ctx, list) -> {
        KeeperException.Code code = KeeperException.Code.get(rc);
        if (code == KeeperException.Code.OK) {
          children.complete(list);
        } else if (code == KeeperException.Code.NONODE) {
          children.complete(List.of());
        } else {
          children.completeExceptionally(failure(code, lockPath));
        }
      }, null);
      List<String> sorted = sortedLockNodes(await(children, timeout, lockPath));
      if (sorted.isEmpty()) {
        return Optional.empty();
      }
      String node = lockPath + "/" + sorted.get(0);
      CompletableFuture<Holder> h = new CompletableFuture<>();
      z.getData(node, false, (rc, path, ctx, data, stat) -> {
        KeeperException.Code code = KeeperException.Code.get(rc);
        if (code == KeeperException.Code.OK) {
          h.complete(new Holder(new String(data == null ? new byte[0] : data, StandardCharsets.UTF_8),
              stat.getCzxid(), stat.getEphemeralOwner(), -1));
        } else if (code == KeeperException.Code.NONODE) {
          h.complete(null); // released between the listing and the read: list again
        } else {
          h.completeExceptionally(failure(code, node));
        }
      }, null);
      Holder holder = await(h, timeout, node);
      if (holder != null) {
        return Optional.of(holder);
      }
    }
    return Optional.empty();
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
