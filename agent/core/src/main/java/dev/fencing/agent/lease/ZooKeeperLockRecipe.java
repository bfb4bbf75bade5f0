package dev.fencing.agent.lease;

import dev.fencing.agent.lease.LeaseProvider.Acquired;
import dev.fencing.agent.lease.LeaseProvider.Holder;
import dev.fencing.agent.log.AgentLog;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

/**
 * ZooKeeper's lock recipe on one session: an ephemeral sequential node {@code <lock path>/lock-<seq>} holding the
 * holder id; the lowest sequence holds, every other candidate watches only its predecessor (no herd). The token is
 * the lock node's czxid. Also the persistent parents the nodes need, the holder's lookup and the watch on a held
 * node's deletion. Every call is asynchronous; a refusal is the {@link ZooKeeperClientConfig#failure} that names what
 * to check.
 */
final class ZooKeeperLockRecipe {
  /** The provider's log: its lines keep the provider's name. */
  private static final AgentLog LOG = AgentLog.get(ZooKeeperLeaseProvider.class);
  static final String NODE_PREFIX = "lock-";

  private final ZooKeeperClientConfig client;

  ZooKeeperLockRecipe(ZooKeeperClientConfig client) {
    this.client = client;
  }

  /** Creates {@code path} and its missing parents (persistent); completes with its stat. */
  CompletableFuture<Stat> ensurePath(ZooKeeper z, String path) {
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
          z.create(path, new byte[0], client.acl(), CreateMode.PERSISTENT, (rc2, p2, ctx2, name, created) -> {
            KeeperException.Code c2 = KeeperException.Code.get(rc2);
            if (c2 == KeeperException.Code.OK) {
              f.complete(created);
            } else if (c2 == KeeperException.Code.NODEEXISTS) {
              z.exists(path, false, (rc3, p3, ctx3, s3) -> complete(f, rc3, s3, path), null);
            } else {
              f.completeExceptionally(client.failure(c2, path));
            }
          }, null);
        });
      } else {
        f.completeExceptionally(client.failure(code, path));
      }
    }, null);
    return f;
  }

  /** Completes {@code f} with the stat of an answer about {@code path}, or with its failure. */
  void complete(CompletableFuture<Stat> f, int rc, Stat stat, String path) {
    KeeperException.Code code = KeeperException.Code.get(rc);
    if (code == KeeperException.Code.OK && stat != null) {
      f.complete(stat);
    } else {
      f.completeExceptionally(client.failure(code == KeeperException.Code.OK ? KeeperException.Code.NONODE : code,
          path));
    }
  }

  /** {@code f}'s value, waited for up to {@code timeout}; its own failure, or a timeout naming {@code what}. */
  static <T> T await(CompletableFuture<T> f, Duration timeout, String what) throws Exception {
    try {
      return f.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      Throwable c = e.getCause();
      throw c instanceof Exception ? (Exception) c : e;
    } catch (TimeoutException e) {
      throw new TimeoutException("ZooKeeper did not answer about " + what + " within " + timeout.toMillis() + " ms");
    }
  }

  /**
   * Creates the session's lock node under {@code lockPath} (and the path) and completes {@code f} once it holds the
   * lock: the token is its czxid, {@code cluster} the ensemble identity it was created in.
   */
  void campaign(ZooKeeper z, String lockPath, String holderId, long cluster, CompletableFuture<Acquired> f) {
    ensurePath(z, lockPath).whenComplete((parent, error) -> {
      if (error != null) {
        f.completeExceptionally(error);
        return;
      }
      z.create(lockPath + "/" + NODE_PREFIX, holderId.getBytes(StandardCharsets.UTF_8), client.acl(),
          CreateMode.EPHEMERAL_SEQUENTIAL, (rc, path, ctx, name, stat) -> {
            KeeperException.Code code = KeeperException.Code.get(rc);
            if (code != KeeperException.Code.OK) {
              f.completeExceptionally(client.failure(code, lockPath));
              return;
            }
            new Candidate(z, lockPath, name, stat.getCzxid(), cluster, f).check();
          }, null);
    });
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
          result.completeExceptionally(client.failure(code, lockPath));
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
              result.completeExceptionally(client.failure(c2, predecessor));
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

  /** Runs {@code fire} once {@code node} is gone (deleted, or already missing), until {@code done}. */
  void watchNode(ZooKeeper z, String node, Runnable fire, AtomicBoolean done) {
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

  /** The holder of the lock at {@code lockPath}: its lowest node's holder id and czxid; empty when none holds it. */
  Optional<Holder> holder(ZooKeeper z, String lockPath, Duration timeout) throws Exception {
    for (int attempt = 0; attempt < 3; attempt++) {
      CompletableFuture<List<String>> children = new CompletableFuture<>();
      z.getChildren(lockPath, false, (rc, path, ctx, list) -> {
        KeeperException.Code code = KeeperException.Code.get(rc);
        if (code == KeeperException.Code.OK) {
          children.complete(list);
        } else if (code == KeeperException.Code.NONODE) {
          children.complete(List.of());
        } else {
          children.completeExceptionally(client.failure(code, lockPath));
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
          h.completeExceptionally(client.failure(code, node));
        }
      }, null);
      Holder holder = await(h, timeout, node);
      if (holder != null) {
        return Optional.of(holder);
      }
    }
    return Optional.empty();
  }
}
