package dev.fencing.agent.it.lease;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.jdbc.JdbcTakeoverIT;
import dev.fencing.agent.it.release.CliAndAttachIT;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.AgentProcesses.Agent;
import dev.fencing.agent.it.jdbc.JdbcIT.JdbcJvm;
import dev.fencing.fence.sql.SqlFence;
import dev.fencing.fence.sql.SqlFenceInstaller;
import dev.fencing.fence.sql.TableName;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.Http;
import dev.fencing.testing.ZooKeeperEnsemble;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * fencing.coordinator=zookeeper against a real 3-server ensemble: the takeover story (a paused holder replaced by a
 * strictly higher token, its stale writes refused by PostgreSQL's fence), a leader failure the session survives, a
 * wiped ensemble reported as token reuse, digest authentication, doctor; and an etcd agent loads no ZooKeeper class.
 *
 * <p>One ensemble serves every case but the wipe (which destroys its history): each case has a lock of its own, named
 * after its Java version, and the digest case a chroot of its own (its ACLs cover the nodes it creates); the leader
 * case restarts the server it killed.
 */
class ZooKeeperTakeoverIT {
  private static ZooKeeperEnsemble zk;

  @BeforeAll
  static void startEnsemble() {
    zk = ZooKeeperEnsemble.start(3);
  }

  @AfterAll
  static void stopEnsemble() {
    if (zk != null) {
      zk.close();
    }
  }

  static List<Path> javaHomes() {
    return AgentProcesses.javaHomes();
  }

  /**
   * The newest Java only, for the cases about the ensemble (its leader killed, its data wiped): what they test is the
   * agent's ZooKeeper session handling, its own code and the relocated client's, the same on every Java; the newest
   * is where a change of the JDK's networking would show first. The takeover and class-loading cases run on 17 and 25.
   */
  static List<Path> newestJava() {
    return AgentProcesses.newestJava();
  }

  /**
   * This build's Java only, for the ensemble's ACLs and the doctor's report: the agent's own code and the relocated
   * client's, the same on every Java.
   */
  static List<Path> currentJava() {
    return List.of(AgentProcesses.javaHomes().get(0));
  }

  /** {@code base} with the Java version of the run: cases on the shared ensemble never share a lock. */
  private static String lock(String base, Path javaHome) {
    return base + "-java" + AgentProcesses.javaVersion(javaHome);
  }

  private static String args(String lock, ZooKeeperEnsemble zk, String ttl) {
    return args(lock, zk.connectString(), ttl);
  }

  private static String args(String lock, String connect, String ttl) {
    return "lock=" + lock + ",coordinator=zookeeper,zookeeper.connect=" + connect + ",lease.ttl=" + ttl
        + ",lease.safety-margin=500ms";
  }

  /** A client of the test's own, to look at what the agent wrote. */
  private static ZooKeeper client(ZooKeeperEnsemble zk) throws Exception {
    return client(zk.connectString());
  }

  private static ZooKeeper client(String connect) throws Exception {
    CountDownLatch connected = new CountDownLatch(1);
    ZooKeeper z = new ZooKeeper(connect, 10_000, e -> {
      if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
        connected.countDown();
      }
    });
    assertThat(connected.await(20, TimeUnit.SECONDS)).as("test client connected to " + connect).isTrue();
    return z;
  }

  /** The czxid of the lowest lock node of {@code lock}: the holder's token as ZooKeeper sees it. */
  private static long holderCzxid(ZooKeeper z, String lock) throws Exception {
    String path = "/fencing/locks/" + lock;
    List<String> nodes = z.getChildren(path, false);
    String lowest = nodes.stream().min(Comparator.comparing(n -> n.substring(n.length() - 10))).orElseThrow();
    Stat stat = z.exists(path + "/" + lowest, false);
    return stat.getCzxid();
  }

  @ParameterizedTest
  @MethodSource("javaHomes")
  void pausedHolderIsReplacedWithAHigherTokenAndItsStaleWritesAreRefusedByTheFence(Path javaHome) throws Exception {
    String ledger = lock("ledger", javaHome);
    try (JdbcTakeoverIT.Database db = JdbcTakeoverIT.start("postgresql")) {
      try (Connection c = DriverManager.getConnection(db.url()); Statement s = c.createStatement()) {
        s.execute("CREATE TABLE account (id INT PRIMARY KEY, balance INT NOT NULL)");
        s.execute("INSERT INTO account VALUES (1, 0)");
        new SqlFenceInstaller(c).install(new SqlFence(TableName.parse("account"), ledger, false, false));
      }
      String cp = AgentProcesses.appClasspath() + java.io.File.pathSeparator + System.getProperty("fencing.it.postgresql.jar");
      String args = args(ledger, zk, "3s");
      try (ZooKeeper z = client(zk); JdbcJvm a = new JdbcJvm(javaHome, "zk-a", args, db.url(), cp)) {
        long tokenA = Long.parseLong(Http.jsonField(Http.awaitStatus(a.port, "\"state\":\"HOLDING\"", Duration.ofSeconds(20)), "token"));
        assertThat(tokenA).as("token = czxid of the holder's lock node").isEqualTo(holderCzxid(z, ledger));
        assertThat(a.run("SQL UPDATE account SET balance = 100 WHERE id = 1")).isEqualTo("OK 1");
        try (JdbcJvm b = new JdbcJvm(javaHome, "zk-b", args, db.url(), cp)) {
          Http.awaitStatus(b.port, "\"state\":\"STANDBY\"", Duration.ofSeconds(20));

          a.jvm.suspend(); // past the session timeout: ZooKeeper expires A's session and deletes its node
          String took = Http.awaitStatus(b.port, "\"state\":\"HOLDING\"", Duration.ofSeconds(3 + 4));
          long tokenB = Long.parseLong(Http.jsonField(took, "token"));
          assertThat(tokenB).isGreaterThan(tokenA).isEqualTo(holderCzxid(z, ledger));
          assertThat(b.run("SQL UPDATE account SET balance = 200 WHERE id = 1")).isEqualTo("OK 1");

          a.jvm.resume();
          assertThat(a.run("SQL UPDATE account SET balance = 666 WHERE id = 1")).startsWith("ERR FN001");
          for (int i = 0; i < 20; i++) {
            assertThat(Http.jsonField(Http.get("http://127.0.0.1:" + a.port + "/status"), "state"))
                .as("resumed holder, sample %d", i).isNotEqualTo("HOLDING");
            Thread.sleep(100);
          }
          assertThat(a.run("PREP UPDATE account SET balance = 667 WHERE id = 1")).startsWith("ERR FN001");
          assertThat(JdbcTakeoverIT.query(db.url(), "SELECT balance FROM account WHERE id = 1")).isEqualTo("200");
          assertThat(JdbcTakeoverIT.query(db.url(), "SELECT token FROM fencing_fence WHERE lock_name = '" + ledger + "'"))
              .isEqualTo(Long.toString(tokenB));
          assertThat(b.run("SQL UPDATE account SET balance = 300 WHERE id = 1")).isEqualTo("OK 1");
        }
      }
    }
  }

  @ParameterizedTest
  @MethodSource("newestJava")
  void holderKeepsItsTokenWhenTheZooKeeperLeaderIsKilled(Path javaHome) throws Exception {
    ZooKeeperEnsemble.Server leader = null;
    try (Agent agent = AgentProcesses.start(javaHome, "zk-leader", args("survive", zk, "12s"))) {
      agent.awaitState("HOLDING", Duration.ofSeconds(20));
      long token = agent.token();
      leader = zk.leader();
      leader.kill();
      long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      int samples = 0;
      while (System.nanoTime() < end) {
        String status = agent.status();
        assertThat(Http.jsonField(status, "state")).as("sample %d after killing %s: %s", samples, leader, status)
            .isEqualTo("HOLDING");
        assertThat(Long.parseLong(Http.jsonField(status, "token"))).isEqualTo(token);
        samples++;
        Thread.sleep(100);
      }
      zk.awaitLeader(Duration.ofSeconds(20));
      assertThat(zk.leader().id()).isNotEqualTo(leader.id());
      assertThat(agent.lastDecision()).isEqualTo("TAG - " + token);
      assertThat(agent.metrics()).doesNotContainPattern("fencing_lease_losses_total\\{[^}]*\\} [1-9]");
      try (ZooKeeper z = client(zk)) {
        assertThat(holderCzxid(z, "survive")).isEqualTo(token);
      }
    } finally {
      if (leader != null) { // the next cases get the whole ensemble back
        leader.start();
        zk.awaitLeader(Duration.ofSeconds(60));
      }
    }
  }

  @ParameterizedTest
  @MethodSource("newestJava")
  void aWipedEnsembleIsReportedAsTokenReuse(Path javaHome) throws Exception {
    try (ZooKeeperEnsemble wiped = ZooKeeperEnsemble.start(3)) { // its own: the wipe ends the shared one's history
      try (ZooKeeper z = client(wiped)) {
        for (int i = 0; i < 20; i++) {
          z.create("/filler" + i, new byte[0], org.apache.zookeeper.ZooDefs.Ids.OPEN_ACL_UNSAFE,
              org.apache.zookeeper.CreateMode.PERSISTENT); // zxids the wiped ensemble will issue again
        }
      }
      try (Agent agent = AgentProcesses.start(javaHome, "zk-wipe", args("wipe", wiped, "3s"))) {
        agent.awaitState("HOLDING", Duration.ofSeconds(20));
        long first = agent.token();
        assertThat(agent.metrics()).contains("fencing_token_reuse_total{lock=\"wipe\"} 0.0");

        wiped.wipeAndRestart();

        String reused = Http.awaitStatus(agent.port, "\"tokenReused\":true", Duration.ofSeconds(30));
        assertThat(Http.jsonField(reused, "highestSeenToken")).isEqualTo(Long.toString(first));
        assertThat(Long.parseLong(Http.jsonField(reused, "tokenReuseTotal"))).isPositive();
        assertThat(agent.metrics()).containsPattern("fencing_token_reuse_total\\{lock=\"wipe\"\\} [1-9]");
        assertThat(agent.jvm.output()).contains("token reuse on lock 'wipe'");
        Thread.sleep(100);
        assertThat(agent.lastDecision()).startsWith("BLOCK");
      }
    }
  }

  @ParameterizedTest
  @MethodSource("currentJava")
  void digestAuthHoldsTheLockAndAWrongPasswordIsAClearFailure(Path javaHome, @TempDir Path dir) throws Exception {
    Path good = Files.writeString(dir.resolve("good"), "agent:s3cret\n", StandardCharsets.UTF_8);
    Path bad = Files.writeString(dir.resolve("bad"), "agent:wrong\n", StandardCharsets.UTF_8);
    // A chroot of its own: the nodes the agent creates with its ACL (/fencing/locks) are not the other cases'.
    String chroot = "/" + lock("auth", javaHome);
    try (ZooKeeper z = client(zk)) {
      z.create(chroot, new byte[0], org.apache.zookeeper.ZooDefs.Ids.OPEN_ACL_UNSAFE,
          org.apache.zookeeper.CreateMode.PERSISTENT);
    }
    String connect = zk.connectString() + chroot;
    try (Agent holder = AgentProcesses.start(javaHome, "zk-auth", args("auth", connect, "3s") + ",zookeeper.auth-file=" + good)) {
      holder.awaitState("HOLDING", Duration.ofSeconds(20));
      try (ZooKeeper z = client(connect)) {
        // The agent's nodes are its user's alone: an anonymous client may not even read them.
        try {
          z.getData("/fencing/locks", false, null);
          throw new AssertionError("anonymous read of /fencing/locks was allowed");
        } catch (org.apache.zookeeper.KeeperException.NoAuthException expected) {
          // refused, as the ACL says
        }
        z.addAuthInfo("digest", "agent:s3cret".getBytes(StandardCharsets.UTF_8));
        org.apache.zookeeper.data.Id owner = z.getACL("/fencing/locks", new Stat()).get(0).getId();
        assertThat(owner.getScheme()).isEqualTo("digest");
        assertThat(owner.getId()).startsWith("agent:");
      }
      try (Agent wrong = AgentProcesses.start(javaHome, "zk-auth-wrong", args("auth", connect, "3s") + ",zookeeper.auth-file=" + bad)) {
        String detail = Http.jsonField(wrong.awaitState("FAILED", Duration.ofSeconds(20)), "detail");
        assertThat(detail).contains("NOAUTH").contains("fencing.zookeeper.auth-file").contains("user 'agent'")
            .contains("wrong password");
        assertThat(holder.state()).isEqualTo("HOLDING");
      }
    }
  }

  @ParameterizedTest
  @MethodSource("currentJava")
  void doctorShowsTheZooKeeperHolderAndItsToken(Path javaHome) throws Exception {
    String doc = lock("doc", javaHome);
    try (Agent holder = AgentProcesses.start(javaHome, "zk-doctor-holder", args(doc, zk, "3s"))) {
      holder.awaitState("HOLDING", Duration.ofSeconds(20));
      long token = holder.token();
      try (AgentJvm doctor = AgentJvm.builder().javaHome(javaHome).name("zk-doctor-java" + AgentProcesses.javaVersion(javaHome))
          .noAgent().executableJar(Path.of(System.getProperty("fencing.agent.jar")))
          .args("doctor", "lock=" + doc, "coordinator=zookeeper", "zookeeper.connect=" + zk.connectString()).start()) {
        assertThat(doctor.awaitExit(Duration.ofSeconds(30))).as(doctor.output()).isZero();
        assertThat(doctor.output())
            .contains("ZooKeeper " + zk.connectString())
            .contains("lock '" + doc + "' (JVM-wide): held by zk-doctor-holder with fencing token " + token)
            .contains("doctor: OK");
      }
    }
  }

  @ParameterizedTest
  @MethodSource("javaHomes")
  void anEtcdAgentLoadsNoZooKeeperClass(Path javaHome) throws Exception {
    try (EtcdCluster etcd = EtcdCluster.single();
        AgentJvm app = AgentJvm.builder().javaHome(javaHome).name("zk-none-java" + AgentProcesses.javaVersion(javaHome))
            .jvmArg("-Xlog:class+load=info:stdout")
            .agentArgs("lock=nozk,http.port=0,etcd.endpoints=" + etcd.endpoints())
            .classpath(AgentProcesses.appClasspath()).mainClass(CliAndAttachIT.IdleApp.class.getName()).start()) {
      String out = app.awaitOutput("holding lock 'nozk'", Duration.ofSeconds(20));
      assertThat(out).contains("dev.fencing.agent.lease.EtcdLeaseProvider ") // the log covers the provider's loading
          .doesNotContain("org.apache.zookeeper.")
          .doesNotContain("org.apache.jute.")
          .doesNotContain("ZooKeeperLeaseProvider");
    }
  }
}
