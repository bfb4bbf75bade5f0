package dev.fencing.agent.it.capture;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.AppStdin;
import dev.fencing.agent.it.jdbc.JdbcTakeoverIT;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.apps.CuratorLockApp;
import dev.fencing.fence.sql.SqlFence;
import dev.fencing.fence.sql.SqlFenceInstaller;
import dev.fencing.fence.sql.TableName;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import dev.fencing.testing.ZooKeeperEnsemble;
import java.io.File;
import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Applications that take their own locks, with the agent attached and no fencing code: the agent captures the lock or
 * leadership (its token: the czxid of the application's lock, lease or latch node; the create revision of its jetcd
 * lock or campaign key), the holder's writes carry it, and a holder paused inside its critical section (inside
 * {@code takeLeadership}, while its latch or election leads) past its ZooKeeper session timeout or lease TTL has its
 * writes after resuming refused by PostgreSQL's fence while the next holder's are accepted.
 */
class CapturedLocksIT {
  static List<Path> javaHomes() {
    return AgentProcesses.javaHomes();
  }

  /** Each Curator recipe the agent captures (see CuratorLockApp) once: the mutex on this build's Java, the rest on 25. */
  static Stream<Arguments> curatorRecipes() {
    return recipes("mutex", "semaphore", "selector", "selector-thread", "latch");
  }

  /** A jetcd lock (on this build's Java) and a jetcd election (on the newest, see JetcdLockApp). */
  static Stream<Arguments> jetcdRecipes() {
    return recipes("lock", "election");
  }

  /**
   * Each recipe once: the first on this build's Java, the others on the newest. What differs between Javas is whether
   * the capture advice is woven into the client library at all, which the client's recipes show on both; which recipe
   * holds the lock is the agent's own logic, the same on every Java, and each case costs about 11 s of the suite.
   */
  private static Stream<Arguments> recipes(String first, String... others) {
    Path current = javaHomes().get(0);
    Path newest = AgentProcesses.newestJava().get(0);
    return Stream.concat(Stream.of(Arguments.of(current, first)), Stream.of(others).map(k -> Arguments.of(newest, k)));
  }

  /** The app's lock path, and the lock name the agent derives from it (the fence's lock). */
  private static final String PATH = "/app/locks/ledger";
  private static final String LOCK = "app.locks.ledger";
  private static final int SESSION_MS = 3000;

  /**
   * A forked app with the agent: capture only, no lease of the agent's own. The constructor launches it and
   * {@link #started} (or the first command) waits until it has started, so the two apps of a case start side by side
   * (on two cores a JVM's start with the agent takes a second or two).
   */
  static final class LockJvm implements AutoCloseable {
    final AgentJvm jvm;
    final int port = Ports.freePort();
    private final AppStdin stdin;
    private boolean started;

    LockJvm(Path javaHome, String name, Class<?> app, String classpath, String... args) {
      jvm = AgentJvm.builder().javaHome(javaHome).name(name + "-java" + AgentProcesses.javaVersion(javaHome))
          .classpath(classpath).mainClass(app.getName()).args(args)
          .agentArgs("lease.enabled=false,capture.safety-margin=300ms,http.port=" + port).start();
      stdin = AppStdin.jdbc(jvm);
    }

    /** Waits until every one of {@code apps} has started (launched side by side by their constructors). */
    static void started(LockJvm... apps) {
      for (LockJvm app : apps) {
        app.awaitStarted();
      }
    }

    private synchronized void awaitStarted() {
      if (!started) {
        jvm.awaitOutput("APP STARTED", Duration.ofSeconds(30));
        started = true;
      }
    }

    String run(String command) throws IOException {
      awaitStarted();
      return stdin.run(command);
    }

    /** The first captured lock's field {@code name} in /status. */
    String captured(String name) throws IOException {
      awaitStarted();
      String status = Http.get("http://127.0.0.1:" + port + "/status");
      int list = status.indexOf("\"captured\":[{");
      assertThat(list).as("a captured lock in /status: " + status).isNotNegative();
      int from = status.indexOf('{', list);
      return Http.jsonField(status.substring(from, status.indexOf('}', from) + 1), name); // a flat object
    }

    String metrics() {
      awaitStarted();
      return Http.get("http://127.0.0.1:" + port + "/metrics");
    }

    /**
     * The captured lock's own metrics label: the stale writer's FN001 is counted under it, the new holder's tagged
     * writes too.
     */
    static void countedUnderTheCapturedLock(LockJvm stale, LockJvm holder) throws IOException {
      String lock = stale.captured("lock");
      assertThat(stale.metrics()).contains("fencing_rejections_total{channel=\"jdbc\",lock=\"" + lock
          + "\",reason=\"stale_token\"} 1.0");
      assertThat(holder.metrics()).containsPattern("fencing_side_effects_total\\{channel=\"jdbc\",fenced=\"true\","
          + "lock=\"" + java.util.regex.Pattern.quote(lock) + "\",outcome=\"tagged\"\\} [1-9]");
    }

    @Override
    public void close() {
      jvm.close();
    }
  }

  private static ZooKeeper client(ZooKeeperEnsemble zk) throws Exception {
    CountDownLatch connected = new CountDownLatch(1);
    ZooKeeper z = new ZooKeeper(zk.connectString(), 10_000, e -> {
      if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
        connected.countDown();
      }
    });
    assertThat(connected.await(20, TimeUnit.SECONDS)).as("test client connected to " + zk).isTrue();
    return z;
  }

  /**
   * The czxid of the lowest lock node under the app's lock path (the lease nodes' parent for a semaphore): the
   * holder's token as ZooKeeper sees it.
   */
  private static long holderCzxid(ZooKeeper z, String kind) throws Exception {
    String parent = kind.equals("semaphore") ? PATH + "/leases" : PATH;
    List<String> nodes = z.getChildren(parent, false);
    String lowest = nodes.stream().min(java.util.Comparator.comparing(n -> n.substring(n.length() - 10))).orElseThrow();
    Stat stat = z.exists(parent + "/" + lowest, false);
    return stat.getCzxid();
  }

  @ParameterizedTest(name = "{1} on {0}")
  @MethodSource("curatorRecipes")
  void curatorHolderPausedPastItsSessionHasItsStaleWritesRefusedByTheFence(Path javaHome, String kind)
      throws Exception {
    try (ZooKeeperEnsemble zk = ZooKeeperEnsemble.start(1); JdbcTakeoverIT.Database db = JdbcTakeoverIT.start("postgresql")) {
      try (Connection c = DriverManager.getConnection(db.url()); Statement s = c.createStatement()) {
        s.execute("CREATE TABLE account (id INT PRIMARY KEY, balance INT NOT NULL)");
        s.execute("INSERT INTO account VALUES (1, 0)");
        new SqlFenceInstaller(c).install(new SqlFence(TableName.parse("account"), LOCK, false, false));
      }
      String cp = AgentProcesses.appClasspath() + File.pathSeparator + System.getProperty("fencing.it.postgresql.jar")
          + File.pathSeparator + AgentProcesses.testJars();
      String[] args = {zk.connectString(), Integer.toString(SESSION_MS), PATH, db.url(), kind};
      try (ZooKeeper z = client(zk);
          LockJvm a = new LockJvm(javaHome, "curator-" + kind + "-a", CuratorLockApp.class, cp, args);
          LockJvm b = new LockJvm(javaHome, "curator-" + kind + "-b", CuratorLockApp.class, cp, args)) {
        LockJvm.started(a, b);
        assertThat(a.run("SQL UPDATE account SET balance = 1 WHERE id = 1")).as("outside the lock: no token")
            .startsWith("ERR FN002");
        assertThat(a.run("LOCK")).isEqualTo("OK locked");
        long tokenA = holderCzxid(z, kind);
        assertThat(a.captured("lock")).isEqualTo(LOCK);
        assertThat(a.captured("state")).isEqualTo("HOLDING");
        assertThat(Long.parseLong(a.captured("token"))).as("token = czxid of the app's lock node").isEqualTo(tokenA);
        assertThat(a.run("SQL UPDATE account SET balance = 100 WHERE id = 1")).isEqualTo("OK 1");
        Thread.sleep(SESSION_MS + 500); // answered pings keep the captured lock trusted past one session timeout
        assertThat(a.captured("state")).isEqualTo("HOLDING");
        assertThat(a.run("SQL UPDATE account SET balance = 101 WHERE id = 1")).isEqualTo("OK 1");

        a.jvm.suspend(); // inside its critical section, past the session timeout: ZooKeeper deletes A's node
        assertThat(b.run("LOCK")).isEqualTo("OK locked");
        long tokenB = holderCzxid(z, kind);
        assertThat(tokenB).isGreaterThan(tokenA);
        assertThat(Long.parseLong(b.captured("token"))).isEqualTo(tokenB);
        assertThat(b.run("SQL UPDATE account SET balance = 200 WHERE id = 1")).isEqualTo("OK 1");

        a.jvm.resume();
        assertThat(a.run("SQL UPDATE account SET balance = 666 WHERE id = 1")).startsWith("ERR FN001");
        assertThat(a.captured("state")).isNotEqualTo("HOLDING");
        LockJvm.countedUnderTheCapturedLock(a, b);
        assertThat(JdbcTakeoverIT.query(db.url(), "SELECT balance FROM account WHERE id = 1")).isEqualTo("200");
        assertThat(JdbcTakeoverIT.query(db.url(), "SELECT token FROM fencing_fence WHERE lock_name = '" + LOCK + "'"))
            .isEqualTo(Long.toString(tokenB));
        assertThat(b.run("SQL UPDATE account SET balance = 300 WHERE id = 1")).isEqualTo("OK 1");
        assertThat(b.run("UNLOCK")).isEqualTo("OK unlocked");
        assertThat(b.captured("state")).isNotEqualTo("HOLDING");
        assertThat(b.run("SQL UPDATE account SET balance = 301 WHERE id = 1")).as("after release: outside the lock")
            .startsWith("ERR FN002");
      }
    }
  }

  /** The agent's own logic (where a captured scope ends), the same on every Java. */
  static List<Path> newestJava() {
    return AgentProcesses.newestJava();
  }

  @ParameterizedTest
  @MethodSource("newestJava")
  void aLockTakenByAPooledTaskAndReleasedElsewhereLeavesTheThreadsNextTaskOutsideItsScope(Path javaHome)
      throws Exception {
    try (ZooKeeperEnsemble zk = ZooKeeperEnsemble.start(1); JdbcTakeoverIT.Database db = JdbcTakeoverIT.start("postgresql")) {
      try (Connection c = DriverManager.getConnection(db.url()); Statement s = c.createStatement()) {
        s.execute("CREATE TABLE audit (id INT)"); // unfenced: only the agent stands between a write and it
      }
      String cp = AgentProcesses.appClasspath() + File.pathSeparator + System.getProperty("fencing.it.postgresql.jar")
          + File.pathSeparator + AgentProcesses.testJars();
      try (LockJvm a = new LockJvm(javaHome, "curator-pooled", CuratorLockApp.class, cp, zk.connectString(),
          Integer.toString(SESSION_MS), PATH, db.url(), "pooled", "tenant")) {
        assertThat(a.run("LOCK")).isEqualTo("OK locked"); // a task of the one-thread pool acquires
        assertThat(a.captured("state")).isEqualTo("HOLDING");
        // The lock is the ZooKeeper path under the client's namespace, on its ensemble.
        assertThat(a.captured("lock")).isEqualTo("tenant." + LOCK);
        assertThat(a.captured("coordinator")).isEqualTo("zookeeper " + zk.connectString());
        assertThat(a.run("UNLOCK")).isEqualTo("OK unlocked"); // the main thread releases: the grant ends
        assertThat(a.captured("state")).isNotEqualTo("HOLDING");
        // The pool's next task, unrelated to the lock, on the thread that acquired it: not in the ended lock's scope.
        assertThat(a.run("SQL INSERT INTO audit VALUES (1)")).isEqualTo("OK 1");
        assertThat(a.run("SQL INSERT INTO audit VALUES (2)")).isEqualTo("OK 1");
      }
      assertThat(JdbcTakeoverIT.query(db.url(), "SELECT count(*) FROM audit")).isEqualTo("2");
    }
  }

  /**
   * The holder's client talks to one follower only; that follower is cut from the quorum (its quorum and election
   * connections blackholed). It keeps answering the holder's pings for syncLimit (10 s here), while the leader expires
   * the holder's session after 3 s and a successor takes the lock. Trust renewed by answered pings would outlive the
   * session by seconds; a sync needs the leader, so the holder's trust runs out on time: none of its writes to an
   * unfenced table lands after its successor's first.
   */
  @ParameterizedTest
  @MethodSource("newestJava")
  void aHolderOnAFollowerCutFromTheQuorumMakesNoUnfencedWriteAfterItsSuccessorsFirst(Path javaHome)
      throws Exception {
    try (ZooKeeperEnsemble zk = ZooKeeperEnsemble.startWithQuorumProxies(3, 50);
        JdbcTakeoverIT.Database db = JdbcTakeoverIT.start("postgresql")) {
      try (Connection c = DriverManager.getConnection(db.url()); Statement s = c.createStatement()) {
        s.execute("CREATE TABLE audit (seq BIGSERIAL PRIMARY KEY, who TEXT NOT NULL)"); // unfenced: arrival order
      }
      ZooKeeperEnsemble.Server leader = zk.leader();
      ZooKeeperEnsemble.Server follower = zk.servers().stream().filter(x -> x != leader).findFirst().orElseThrow();
      String others = zk.servers().stream().filter(x -> x != follower).map(ZooKeeperEnsemble.Server::address)
          .collect(java.util.stream.Collectors.joining(","));
      String cp = AgentProcesses.appClasspath() + File.pathSeparator + System.getProperty("fencing.it.postgresql.jar")
          + File.pathSeparator + AgentProcesses.testJars();
      String session = Integer.toString(SESSION_MS);
      try (LockJvm a = new LockJvm(javaHome, "curator-cut-a", CuratorLockApp.class, cp, follower.address(), session,
              PATH, db.url(), "mutex");
          LockJvm b = new LockJvm(javaHome, "curator-cut-b", CuratorLockApp.class, cp, others, session, PATH,
              db.url(), "mutex")) {
        LockJvm.started(a, b);
        assertThat(a.run("LOCK")).isEqualTo("OK locked");
        assertThat(a.run("SQL INSERT INTO audit (who) VALUES ('a')")).isEqualTo("OK 1");
        Thread.sleep(SESSION_MS); // answered syncs renew the holder's trust past one session timeout
        assertThat(a.run("SQL INSERT INTO audit (who) VALUES ('a')")).isEqualTo("OK 1");

        zk.cutFromQuorum(follower);
        java.util.concurrent.CompletableFuture<String> successor = java.util.concurrent.CompletableFuture
            .supplyAsync(() -> {
              try {
                String locked = b.run("LOCK");
                return locked + " / " + b.run("SQL INSERT INTO audit (who) VALUES ('b')");
              } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
              }
            });
        List<String> holderWrites = new java.util.ArrayList<>();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!successor.isDone() && System.nanoTime() < until) {
          holderWrites.add(a.run("SQL INSERT INTO audit (who) VALUES ('a')"));
          Thread.sleep(100);
        }
        assertThat(successor.get(1, TimeUnit.SECONDS)).isEqualTo("OK locked / OK 1");
        for (int i = 0; i < 20; i++) { // the follower answers the holder's pings for a while yet
          holderWrites.add(a.run("SQL INSERT INTO audit (who) VALUES ('a')"));
          Thread.sleep(100);
        }
        System.out.println("holder's writes after the cut: " + holderWrites.stream().map(w -> w.substring(0,
            w.startsWith("ERR") ? 9 : 4)).collect(java.util.stream.Collectors.groupingBy(w -> w,
            java.util.LinkedHashMap::new, java.util.stream.Collectors.counting())));
        assertThat(holderWrites).as("refused once its trust ran out").anyMatch(w -> w.startsWith("ERR FN003"));
        assertThat(JdbcTakeoverIT.query(db.url(), "SELECT count(*) FROM audit WHERE who = 'a' AND seq > "
            + "(SELECT min(seq) FROM audit WHERE who = 'b')")).as("holder's writes after its successor's first")
            .isEqualTo("0");
      } finally {
        zk.healQuorum();
      }
    }
  }

  /** A fenced table (account, for {@code lock}) and an unfenced one (audit: only the agent stands before it). */
  private static void fencedAndUnfenced(JdbcTakeoverIT.Database db, String lock) throws Exception {
    try (Connection c = DriverManager.getConnection(db.url()); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE account (id INT PRIMARY KEY, balance INT NOT NULL)");
      s.execute("INSERT INTO account VALUES (1, 0)");
      s.execute("CREATE TABLE audit (who TEXT NOT NULL)");
      new SqlFenceInstaller(c).install(new SqlFence(TableName.parse("account"), lock, false, false));
    }
  }

  /**
   * Curator's {@code acquire} returns true on a session that ended around the acquisition (CuratorLockApp's
   * {@code expiring} recipe: the session ends once Curator has seen its node first, and the client carries on with a
   * new one; in production, a session expired while the client was suspended). The agent cannot read the lock node as
   * the client's own: the critical section is still the lock's, and its writes are refused by the agent, unfenced
   * and fenced alike, never passed untagged as if no lock were involved; the successor's go through.
   */
  @ParameterizedTest
  @MethodSource("newestJava")
  void aCuratorAcquisitionOnASessionThatEndedAroundItHasItsWritesRefused(Path javaHome) throws Exception {
    try (ZooKeeperEnsemble zk = ZooKeeperEnsemble.start(1); JdbcTakeoverIT.Database db = JdbcTakeoverIT.start("postgresql")) {
      fencedAndUnfenced(db, LOCK);
      String cp = AgentProcesses.appClasspath() + File.pathSeparator + System.getProperty("fencing.it.postgresql.jar")
          + File.pathSeparator + AgentProcesses.testJars();
      String session = Integer.toString(SESSION_MS);
      try (LockJvm a = new LockJvm(javaHome, "curator-expiring", CuratorLockApp.class, cp, zk.connectString(), session,
              PATH, db.url(), "expiring");
          LockJvm b = new LockJvm(javaHome, "curator-successor", CuratorLockApp.class, cp, zk.connectString(),
              session, PATH, db.url(), "mutex")) {
        LockJvm.started(a, b);
        assertThat(a.run("LOCK")).isEqualTo("OK locked"); // acquire returned true, on a session that is gone
        assertThat(a.run("SQL INSERT INTO audit VALUES ('a-holding')")).as("unfenced, in the critical section")
            .startsWith("ERR FN003");
        assertThat(a.run("SQL UPDATE account SET balance = 1 WHERE id = 1")).as("fenced: no token to carry")
            .startsWith("ERR FN003");
        assertThat(a.captured("state")).isEqualTo("LOST");

        assertThat(b.run("LOCK")).isEqualTo("OK locked"); // once the ensemble expired the old session
        assertThat(b.run("SQL UPDATE account SET balance = 2 WHERE id = 1")).isEqualTo("OK 1");
        assertThat(b.run("SQL INSERT INTO audit VALUES ('b')")).isEqualTo("OK 1");
        assertThat(a.run("SQL INSERT INTO audit VALUES ('a-holding')")).startsWith("ERR FN003");

        assertThat(a.run("UNLOCK")).isEqualTo("OK unlocked");
        assertThat(a.run("SQL INSERT INTO audit VALUES ('a-released')")).as("after release: outside the lock")
            .isEqualTo("OK 1");
      }
      assertThat(JdbcTakeoverIT.query(db.url(), "SELECT string_agg(who, ',' ORDER BY who) FROM audit"))
          .isEqualTo("a-released,b");
      assertThat(JdbcTakeoverIT.query(db.url(), "SELECT balance FROM account WHERE id = 1")).isEqualTo("2");
    }
  }

  /** The create revision of the lowest key under the app's jetcd lock name: the holder's token as etcd sees it. */
  private static long holderRevision(io.etcd.jetcd.Client etcd, String name) throws Exception {
    var prefix = io.etcd.jetcd.ByteSequence.from(name + "/", java.nio.charset.StandardCharsets.UTF_8);
    var kvs = etcd.getKVClient().get(prefix, io.etcd.jetcd.options.GetOption.builder().isPrefix(true).build()).get().getKvs();
    return kvs.stream().mapToLong(io.etcd.jetcd.KeyValue::getCreateRevision).min().orElseThrow();
  }


  /** How many keys etcd has under the app's jetcd lock name (one per holder and waiter). */
  private static int lockKeys(io.etcd.jetcd.Client etcd, String name) throws Exception {
    var prefix = io.etcd.jetcd.ByteSequence.from(name + "/", java.nio.charset.StandardCharsets.UTF_8);
    return etcd.getKVClient().get(prefix, io.etcd.jetcd.options.GetOption.builder().isPrefix(true).build()).get()
        .getKvs().size();
  }

  private static void awaitLockKeys(io.etcd.jetcd.Client etcd, String name, int keys) throws Exception {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (lockKeys(etcd, name) != keys) {
      assertThat(System.nanoTime() < until).as(keys + " keys under " + name + "/").isTrue();
      Thread.sleep(50);
    }
  }

  /**
   * etcd grants a waiter the lock while its process is paused, and the waiter's lease ends before the process reads
   * the answer: jetcd's {@code lock(...).get()} returns a key that is gone. The agent cannot read the key on the
   * waiter's lease: the critical section is still the lock's, and its writes are refused, unfenced and fenced alike.
   */
  @ParameterizedTest
  @MethodSource("newestJava")
  void aJetcdLockWhoseLeaseEndedBeforeItsHolderReadItHasItsWritesRefused(Path javaHome) throws Exception {
    String name = "ledger-lock";
    try (dev.fencing.testing.EtcdCluster etcd = dev.fencing.testing.EtcdCluster.single();
        JdbcTakeoverIT.Database db = JdbcTakeoverIT.start("postgresql")) {
      fencedAndUnfenced(db, name);
      String cp = AgentProcesses.appClasspath() + File.pathSeparator + System.getProperty("fencing.it.postgresql.jar")
          + File.pathSeparator + AgentProcesses.testJars();
      String[] args = {etcd.endpoints(), "2", name, db.url(), "lock"};
      try (io.etcd.jetcd.Client client = io.etcd.jetcd.Client.builder().endpoints(etcd.endpoints().split(",")).build();
          LockJvm a = new LockJvm(javaHome, "jetcd-holder", dev.fencing.agent.it.apps.JetcdLockApp.class, cp, args);
          LockJvm b = new LockJvm(javaHome, "jetcd-waiter", dev.fencing.agent.it.apps.JetcdLockApp.class, cp, args)) {
        LockJvm.started(a, b);
        assertThat(a.run("LOCK")).isEqualTo("OK locked");
        java.util.concurrent.CompletableFuture<String> waiting = java.util.concurrent.CompletableFuture.supplyAsync(
            () -> {
              try {
                return b.run("LOCK");
              } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
              }
            });
        awaitLockKeys(client, name, 2); // the waiter's key is queued behind the holder's
        b.jvm.suspend();
        assertThat(a.run("UNLOCK")).isEqualTo("OK unlocked"); // etcd grants the paused waiter the lock
        awaitLockKeys(client, name, 0); // and the waiter's lease (2 s) ends: its key is deleted
        b.jvm.resume();
        assertThat(waiting.get(30, TimeUnit.SECONDS)).isEqualTo("OK locked");
        assertThat(b.run("SQL INSERT INTO audit VALUES ('b-holding')")).as("unfenced, in the critical section")
            .startsWith("ERR FN003");
        assertThat(b.run("SQL UPDATE account SET balance = 1 WHERE id = 1")).as("fenced: no token to carry")
            .startsWith("ERR FN003");
        assertThat(b.captured("state")).isEqualTo("LOST");
        assertThat(b.run("UNLOCK")).startsWith("OK");
        assertThat(b.run("SQL INSERT INTO audit VALUES ('b-released')")).as("after unlock: outside the lock")
            .isEqualTo("OK 1");
      }
      assertThat(JdbcTakeoverIT.query(db.url(), "SELECT string_agg(who, ',' ORDER BY who) FROM audit"))
          .isEqualTo("b-released");
    }
  }

  @ParameterizedTest(name = "{1} on {0}")
  @MethodSource("jetcdRecipes")
  void jetcdHolderPausedPastItsLeaseHasItsStaleWritesRefusedByTheFence(Path javaHome, String kind) throws Exception {
    String name = "ledger-lock";
    try (dev.fencing.testing.EtcdCluster etcd = dev.fencing.testing.EtcdCluster.single();
        JdbcTakeoverIT.Database db = JdbcTakeoverIT.start("postgresql")) {
      try (Connection c = DriverManager.getConnection(db.url()); Statement s = c.createStatement()) {
        s.execute("CREATE TABLE account (id INT PRIMARY KEY, balance INT NOT NULL)");
        s.execute("INSERT INTO account VALUES (1, 0)");
        new SqlFenceInstaller(c).install(new SqlFence(TableName.parse("account"), name, false, false));
      }
      String cp = AgentProcesses.appClasspath() + File.pathSeparator + System.getProperty("fencing.it.postgresql.jar")
          + File.pathSeparator + AgentProcesses.testJars();
      String[] args = {etcd.endpoints(), "2", name, db.url(), kind};
      try (io.etcd.jetcd.Client client = io.etcd.jetcd.Client.builder().endpoints(etcd.endpoints().split(",")).build();
          LockJvm a = new LockJvm(javaHome, "jetcd-" + kind + "-a", dev.fencing.agent.it.apps.JetcdLockApp.class, cp, args);
          LockJvm b = new LockJvm(javaHome, "jetcd-" + kind + "-b", dev.fencing.agent.it.apps.JetcdLockApp.class, cp, args)) {
        LockJvm.started(a, b);
        assertThat(a.run("LOCK")).isEqualTo("OK locked");
        long tokenA = holderRevision(client, name);
        assertThat(a.captured("lock")).isEqualTo(name);
        assertThat(a.captured("state")).isEqualTo("HOLDING");
        assertThat(Long.parseLong(a.captured("token"))).as("token = create revision of the app's lock or campaign key")
            .isEqualTo(tokenA);
        assertThat(a.run("SQL UPDATE account SET balance = 100 WHERE id = 1")).isEqualTo("OK 1");
        Thread.sleep(2500); // answered keepalives keep the captured lock trusted past one TTL
        assertThat(a.run("SQL UPDATE account SET balance = 101 WHERE id = 1")).isEqualTo("OK 1");

        a.jvm.suspend(); // inside its critical section, past the lease TTL: etcd deletes A's lock key
        assertThat(b.run("LOCK")).isEqualTo("OK locked");
        long tokenB = holderRevision(client, name);
        assertThat(tokenB).isGreaterThan(tokenA);
        assertThat(Long.parseLong(b.captured("token"))).isEqualTo(tokenB);
        assertThat(b.run("SQL UPDATE account SET balance = 200 WHERE id = 1")).isEqualTo("OK 1");

        a.jvm.resume();
        assertThat(a.run("SQL UPDATE account SET balance = 666 WHERE id = 1")).startsWith("ERR FN001");
        assertThat(a.captured("state")).isNotEqualTo("HOLDING");
        LockJvm.countedUnderTheCapturedLock(a, b);
        assertThat(JdbcTakeoverIT.query(db.url(), "SELECT balance FROM account WHERE id = 1")).isEqualTo("200");
        assertThat(b.run("UNLOCK")).isEqualTo("OK unlocked");
        assertThat(b.run("SQL UPDATE account SET balance = 301 WHERE id = 1")).as("after unlock: outside the lock")
            .startsWith("ERR FN002");
      }
    }
  }
}
