package dev.fencing.agent.it.apps;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.FutureTask;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListener;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreMutex;
import org.apache.curator.framework.recipes.locks.PredicateResults;
import org.apache.curator.framework.recipes.locks.StandardLockInternalsDriver;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.ZooKeeper;

/**
 * An ordinary application taking its own Curator lock or leadership (no fencing code), driven on stdin. Arguments:
 * ZooKeeper connect string, session timeout in ms, lock path, JDBC URL, and the recipe: {@code mutex}
 * (InterProcessMutex, the default), {@code semaphore} (InterProcessSemaphoreMutex), {@code selector} (LeaderSelector:
 * while leading, {@code takeLeadership} runs each SQL command, handing it to an executor; its listener ignores
 * connection changes, so a paused leader resumes inside {@code takeLeadership} as one busy with work would),
 * {@code selector-thread} (LeaderSelector whose {@code takeLeadership} starts a {@code new Thread} that runs each SQL
 * command, and only waits for it),
 * {@code latch} (LeaderLatch: SQL runs on the main thread, whoever leads), {@code pooled} (InterProcessSemaphoreMutex
 * acquired by a task of a one-thread pool and released on the main thread; every SQL command is a new task of that
 * pool) or {@code expiring} (InterProcessMutex whose session ends the moment Curator decides the lock is its own:
 * {@code acquire} returns true on a session that is gone, see {@link ExpiringDriver}); a sixth argument is the Curator
 * client's namespace. Commands: {@code LOCK} (blocks until
 * acquired or leading, prints {@code OK locked}), {@code UNLOCK} (release, leave {@code takeLeadership} and close
 * the selector, close the latch), {@code SQL <statement>} (prints {@code OK <count>} or {@code ERR <sqlstate> <message>}).
 */
public final class CuratorLockApp {
  private CuratorLockApp() {}

  private static final Runnable STOP = () -> {};

  public static void main(String[] args) throws Exception {
    CuratorFramework client = CuratorFrameworkFactory.builder().connectString(args[0])
        .sessionTimeoutMs(Integer.parseInt(args[1])).connectionTimeoutMs(10_000).retryPolicy(new RetryOneTime(200))
        .namespace(args.length > 5 ? args[5] : null).build();
    client.start();
    String path = args[2];
    String kind = args.length > 4 ? args[4] : "mutex";
    InterProcessLock lock = kind.equals("semaphore") || kind.equals("pooled")
        ? new InterProcessSemaphoreMutex(client, path)
        : kind.equals("expiring") ? new InterProcessMutex(client, path, new ExpiringDriver())
        : new InterProcessMutex(client, path);
    BlockingQueue<Runnable> work = new LinkedBlockingQueue<>();
    ExecutorService pool = Executors.newFixedThreadPool(2);
    ExecutorService one = Executors.newSingleThreadExecutor();
    CountDownLatch leading = new CountDownLatch(1);
    String id = UUID.randomUUID().toString();
    LeaderSelector selector = new LeaderSelector(client, path, new LeaderSelectorListener() {
      @Override
      public void takeLeadership(CuratorFramework c) throws Exception {
        leading.countDown();
        if (kind.equals("selector-thread")) {
          // The leader's work on a thread of its own; the leadership's thread only waits for it to end.
          CountDownLatch done = new CountDownLatch(1);
          new Thread(() -> {
            try {
              for (Runnable r; (r = work.take()) != STOP; ) {
                r.run();
              }
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            } finally {
              done.countDown();
            }
          }, "leader-worker").start();
          done.await();
          return;
        }
        for (Runnable r; (r = work.take()) != STOP; ) {
          r.run();
        }
      }

      @Override
      public void stateChanged(CuratorFramework c, ConnectionState newState) {}
    });
    selector.setId(id);
    LeaderLatch latch = new LeaderLatch(client, path, id);
    boolean[] inSelector = {false};
    try (Connection c = DriverManager.getConnection(args[3])) {
      System.out.println("APP STARTED");
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
      for (String line; (line = in.readLine()) != null; ) {
        try {
          if (line.equals("LOCK")) {
            if (kind.startsWith("selector")) {
              selector.start();
              leading.await();
              inSelector[0] = true;
            } else if (kind.equals("latch")) {
              latch.start();
              latch.await();
            } else if (kind.equals("pooled")) {
              one.submit(() -> {
                lock.acquire();
                return null;
              }).get();
            } else {
              lock.acquire();
            }
            System.out.println("OK locked");
          } else if (line.equals("UNLOCK")) {
            if (kind.startsWith("selector")) {
              inSelector[0] = false;
              work.put(STOP);
              // takeLeadership returned: LeaderSelector deletes this participant's node
              while (selector.getParticipants().stream().anyMatch(p -> p.getId().equals(id))) {
                Thread.sleep(20);
              }
              selector.close(); // no longer a candidate
            } else if (kind.equals("latch")) {
              latch.close();
            } else {
              lock.release();
            }
            System.out.println("OK unlocked");
          } else if (line.startsWith("SQL ")) {
            String sql = line.substring(4);
            if (kind.equals("pooled")) {
              System.out.println(one.submit(() -> update(c, sql)).get());
            } else if (inSelector[0] && kind.equals("selector-thread")) {
              FutureTask<String> task = new FutureTask<>(() -> update(c, sql)); // run by the leader's own thread
              work.put(task);
              System.out.println(task.get());
            } else if (inSelector[0]) {
              FutureTask<String> task = new FutureTask<>(() -> pool.submit(() -> update(c, sql)).get());
              work.put(task);
              System.out.println(task.get());
            } else {
              System.out.println(update(c, sql));
            }
          } else {
            System.out.println("ERR unknown command " + line);
          }
        } catch (Exception e) {
          System.out.println("ERR " + e);
        }
      }
    }
    pool.shutdownNow();
    one.shutdownNow();
    client.close();
  }

  /**
   * The fault of a holder whose session expires around its acquisition, at a chosen moment: once Curator has seen its
   * node first among the lock's children (it holds the lock), the client's session ends, the way Curator itself ends
   * one that stayed suspended too long (ZooKeeper's testable hook: the client drops the session at once, the ensemble
   * expires it a session timeout later), and Curator connects with a new session before {@code acquire} returns
   * true. Curator's own lock code runs unchanged; this is its lock-driver extension point.
   */
  static final class ExpiringDriver extends StandardLockInternalsDriver {
    @Override
    public PredicateResults getsTheLock(CuratorFramework client, List<String> children, String sequenceNodeName,
        int maxLeases) throws Exception {
      PredicateResults result = super.getsTheLock(client, children, sequenceNodeName, maxLeases);
      if (result.getsTheLock()) {
        ZooKeeper zk = client.getZookeeperClient().getZooKeeper();
        long session = zk.getSessionId();
        zk.getTestable().injectSessionExpiration();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < until && (!client.getZookeeperClient().isConnected()
            || client.getZookeeperClient().getZooKeeper().getSessionId() == session)) {
          Thread.sleep(20);
        }
      }
      return result;
    }
  }

  private static String update(Connection c, String sql) {
    try (Statement s = c.createStatement()) {
      return "OK " + s.executeUpdate(sql);
    } catch (SQLException e) {
      return "ERR " + e.getSQLState() + " " + e.getMessage().replace('\n', ' ');
    }
  }
}
