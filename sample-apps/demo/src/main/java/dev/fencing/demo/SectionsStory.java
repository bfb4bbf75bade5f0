package dev.fencing.demo;

import static dev.fencing.demo.SectionsFacts.REPLICA_A;
import static dev.fencing.demo.SectionsFacts.REPLICA_B;

import dev.fencing.fence.sql.SqlFence;
import dev.fencing.fence.sql.SqlFenceInstaller;
import dev.fencing.fence.sql.TableName;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.PostgresServer;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * The declared-sections story ({@code scripts/demo.sh --sections}): two replicas of the unmodified Spring Boot
 * sample, the agent attached to both with one declared section ({@code SettlementJob#settle@settlement}) and no
 * JVM-wide lock. Both serve an order load the whole time; the settlement job runs on the holder only; the holder is
 * frozen (SIGSTOP) inside a run, past the TTL; the other replica takes the job over with a higher token; the frozen
 * run's write is refused when it wakes. This class makes it happen and narrates; {@link SectionsTimeline} and
 * {@link SectionsChecks} say what it means.
 */
final class SectionsStory {
  private static final String DATABASE = "shop";
  /** How long the end goes on after the refusal: replica-a's next runs are skipped, both keep serving orders. */
  private static final Duration AFTERMATH = Duration.ofMillis(2000);

  private final DemoOptions options;
  private final Console console;
  private final Resources resources;
  private final List<AgentJvm> jvms = new ArrayList<>();

  SectionsStory(DemoOptions options, Console console, Resources resources) {
    this.options = options;
    this.console = console;
    this.resources = resources;
  }

  /** The JVMs started so far (for log paths when something fails). */
  List<AgentJvm> jvms() {
    return jvms;
  }

  SectionsFacts run() {
    console.heading("Setting up (everything on 127.0.0.1, on free ports; all of it is stopped at the end)");
    console.say("Starting etcd and PostgreSQL 15 ...");
    CompletableFuture<PostgresServer> pg = CompletableFuture.supplyAsync(() -> resources.add(PostgresServer.start()));
    EtcdCluster etcd;
    PostgresServer postgres;
    try {
      etcd = resources.add(EtcdCluster.single());
      postgres = pg.join();
    } catch (CompletionException e) {
      throw e.getCause() instanceof RuntimeException r ? r : e;
    } catch (RuntimeException e) {
      pg.exceptionally(x -> null).join(); // registered with resources, so the caller's close stops it
      throw e;
    }
    String url = postgres.jdbcUrl(DATABASE);
    prepare(postgres, url);
    console.say("etcd at " + etcd.endpoints() + ", PostgreSQL on port " + postgres.port() + ": database '" + DATABASE
        + "' with the app's own schema (its schema.sql). The operator installed one SQL fence, on the job's table:");
    console.line("          settlement_run   table mode, lock '" + Replica.LOCK + "': a write with a token below the"
        + " fence's fails (FN001)");
    console.line("          orders           not fenced: any replica takes orders, leader or not");

    console.heading("The story");
    console.say("Starting the same unmodified Spring Boot service (sample-apps/spring-replicas, java -jar) twice,"
        + " with the agent configured by one declared section and no JVM-wide lock:");
    console.line("          -javaagent:fencing-agent.jar=sections=" + Replica.SECTION + "@" + Replica.LOCK
        + ",lease.ttl=" + Replica.TTL + ",...");
    console.line("          The job (@Scheduled) reads, works for " + Replica.JOB_WORK.toMillis() + " ms, then"
        + " writes one settlement_run row; every HTTP request and other write is outside the section.");
    Replica a = launch(REPLICA_A, url, postgres.user(), etcd.endpoints());
    Replica.Lock heldA = a.awaitLock("HOLDING", Duration.ofSeconds(60));
    long aHoldingAt = System.currentTimeMillis();
    console.say("replica-a's agent holds lock '" + Replica.LOCK + "' with fencing token " + heldA.token()
        + " (Spring is still starting).");
    Replica b = launch(REPLICA_B, url, postgres.user(), etcd.endpoints());
    b.awaitLock("STANDBY", Duration.ofSeconds(60));
    long bStandbyAt = System.currentTimeMillis();
    console.say("replica-b's agent waits for the lock (STANDBY). Both Spring applications are starting ...");
    OrderLoad load = resources.add(new OrderLoad()); // stopped below, or by resources on a failure or Ctrl-C
    a.awaitStarted();
    load.add(a);
    console.say("replica-a is up on port " + a.port + "; the order load (POST /orders every 50 ms) starts on it.");
    b.awaitStarted();
    load.add(b);
    long bothUpAt = System.currentTimeMillis();
    console.say("replica-b is up on port " + b.port + " (Spring's SQL init wrote at its startup, on standby);"
        + " the load goes to both.");

    try (Connection c = DriverManager.getConnection(url)) {
      awaitRuns(c, REPLICA_A, 2, Duration.ofSeconds(20));
      MetricsSnapshot before = scrape(a, b);
      console.say("replica-a's job has run " + count(c, REPLICA_A) + " times; replica-b's agent skipped its run "
          + Math.round(before.value(REPLICA_B, SectionsFacts.SKIPPED, "lock", Replica.LOCK)) + " times (it does not"
          + " hold the lock). Both have served " + load.requests().stream().filter(OrderLoad.Request::ok).count()
          + " orders so far.");

      // Freeze replica-a inside a run: after one of its writes, once the next run's transaction has read and sits
      // idle in its work (an order's transaction is never idle that long).
      long lastRun = awaitNewRun(c, REPLICA_A, Duration.ofSeconds(10));
      awaitRunInItsWork(c, REPLICA_A, Duration.ofSeconds(10));
      load.pause(a);
      long freezeAt = System.currentTimeMillis();
      a.jvm.suspend();
      console.say("replica-a freezes (SIGSTOP) in the middle of a settlement run, as in a long GC pause: the run's"
          + " transaction is open (pg_stat_activity: idle in transaction), its write still to come. The load leaves"
          + " replica-a alone while it is frozen.");
      Replica.Lock heldB = b.awaitLock("HOLDING", Duration.ofSeconds(15));
      long takeoverAt = System.currentTimeMillis();
      if (heldB.token() <= heldA.token()) {
        throw new StoryBroken("replica-b took over with token " + heldB.token() + ", not above replica-a's "
            + heldA.token());
      }
      console.say(String.format(Locale.ROOT, "%.1f s into the freeze, etcd expired replica-a's lease and replica-b"
          + " took the lock with token %d (higher than %d).", (takeoverAt - freezeAt) / 1000.0, heldB.token(),
          heldA.token()));
      awaitRuns(c, REPLICA_B, 1, Duration.ofSeconds(15));
      console.say("replica-b's job ran: its first settlement_run row carries token " + heldB.token() + ".");

      int mark = a.jvm.output().length();
      // Stamped before the signal: the JVM runs as soon as it arrives, before the signalling process has even exited,
      // and a side effect it reports then is one of the resumed worker's (a stamp after it would miss it).
      long resumeAt = System.currentTimeMillis();
      a.jvm.resume();
      load.resume(a);
      Replica.Lock woke = a.awaitLockAnswer();
      console.say("replica-a resumes (SIGCONT) in the middle of its run, about to write. Its agent knows better:"
          + " /status says " + woke.state() + ".");
      SectionsFacts.Refusal refusal = awaitRefusal(a, mark, Duration.ofSeconds(20));
      console.say("replica-a's run wrote on waking: REFUSED with SQLSTATE " + refusal.sqlState() + " ("
          + refusal.meaning() + ").");
      Story.pause(AFTERMATH.toMillis());
      load.close();
      long endAt = System.currentTimeMillis();
      console.say("Both replicas went on serving orders; replica-a's next runs of the job were skipped. Stopping the"
          + " load.");
      Replica.Lock finalA = a.lock();
      Replica.Lock finalB = b.lock();
      MetricsSnapshot after = scrape(a, b);
      return new SectionsFacts(heldA.token(), heldB.token(), aHoldingAt, bStandbyAt, bothUpAt, freezeAt,
          takeoverAt, resumeAt, endAt, woke, finalA, finalB, refusal, lastRun, replicaStarts(c), runs(c),
          orders(c), load.requests(), before, after);
    } catch (SQLException e) {
      throw new StoryBroken("cannot read PostgreSQL: " + e.getMessage(), e);
    }
  }

  private Replica launch(String name, String url, String user, String etcdEndpoints) {
    Replica r = Replica.launch(options, name, url, user, etcdEndpoints.replace(',', ';'), resources);
    jvms.add(r.jvm);
    return r;
  }

  /** The DBA's part: the database, the app's own schema (the one its SQL init runs), the fence on the job's table. */
  private void prepare(PostgresServer postgres, String url) {
    try (Connection admin = DriverManager.getConnection(postgres.jdbcUrl()); Statement s = admin.createStatement()) {
      s.execute("CREATE DATABASE " + DATABASE);
    } catch (SQLException e) {
      throw new StoryBroken("cannot create the database: " + e.getMessage(), e);
    }
    try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
      s.execute(schemaOfTheApp());
      new SqlFenceInstaller(c).install(new SqlFence(TableName.parse("settlement_run"), Replica.LOCK, false, false));
    } catch (SQLException e) {
      throw new StoryBroken("cannot prepare database " + DATABASE + ": " + e.getMessage(), e);
    }
  }

  private String schemaOfTheApp() {
    try (ZipFile jar = new ZipFile(options.springJar().toFile())) {
      ZipEntry entry = jar.getEntry("BOOT-INF/classes/schema.sql");
      if (entry == null) {
        throw new StoryBroken(options.springJar() + " has no BOOT-INF/classes/schema.sql: is it the Spring Boot"
            + " sample's fat jar?");
      }
      try (InputStream in = jar.getInputStream(entry)) {
        return new String(in.readAllBytes(), StandardCharsets.UTF_8);
      }
    } catch (IOException e) {
      throw new StoryBroken("cannot read the app's schema from " + options.springJar() + ": " + e.getMessage(), e);
    }
  }

  private static MetricsSnapshot scrape(Replica a, Replica b) {
    return MetricsSnapshot.scrape(List.of(new MetricsSnapshot.Source(a.name, a::metrics),
        new MetricsSnapshot.Source(b.name, b::metrics)));
  }

  private static SectionsFacts.Refusal awaitRefusal(Replica a, int mark, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      String output = a.jvm.output();
      SectionsFacts.Refusal r = SectionsFacts.Refusal.find(output.substring(Math.min(mark, output.length())),
          System.currentTimeMillis());
      if (r != null) {
        return r;
      }
      Story.pause(50);
    }
    throw new StoryBroken("replica-a's frozen run was not refused within " + timeout.toSeconds() + " s of waking (no"
        + " FN001, FN003 or 25P03 in its log " + a.jvm.logFile() + ")");
  }

  private static void awaitRuns(Connection c, String replica, long atLeast, Duration timeout) throws SQLException {
    long deadline = System.nanoTime() + timeout.toNanos();
    long n = 0;
    while (System.nanoTime() < deadline) {
      n = count(c, replica);
      if (n >= atLeast) {
        return;
      }
      Story.pause(100);
    }
    throw new StoryBroken(replica + "'s settlement job ran " + n + " times within " + timeout.toSeconds() + " s,"
        + " expected at least " + atLeast);
  }

  /** Waits for the next row of {@code replica} and returns its id. */
  private static long awaitNewRun(Connection c, String replica, Duration timeout) throws SQLException {
    String sql = "SELECT coalesce(max(id), 0) FROM settlement_run WHERE replica = '" + replica + "'";
    long last = single(c, sql);
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      long now = single(c, sql);
      if (now > last) {
        return now;
      }
      Story.pause(20);
    }
    throw new StoryBroken("no new settlement run of " + replica + " within " + timeout.toSeconds() + " s");
  }

  /** Waits until the job's session of {@code replica} is idle in an open transaction: the run is in its work. */
  private static void awaitRunInItsWork(Connection c, String replica, Duration timeout) throws SQLException {
    String sql = "SELECT count(*) FROM pg_stat_activity WHERE application_name = '" + replica + "'"
        + " AND state = 'idle in transaction' AND now() - state_change > interval '150 milliseconds'";
    long deadline = System.nanoTime() + timeout.toNanos();
    while (single(c, sql) == 0) {
      if (System.nanoTime() > deadline) {
        throw new StoryBroken(replica + "'s settlement run did not show as an open transaction in pg_stat_activity"
            + " within " + timeout.toSeconds() + " s");
      }
      Story.pause(20);
    }
  }

  private static long count(Connection c, String replica) throws SQLException {
    return single(c, "SELECT count(*) FROM settlement_run WHERE replica = '" + replica + "'");
  }

  private static long single(Connection c, String sql) throws SQLException {
    try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static List<String> replicaStarts(Connection c) throws SQLException {
    List<String> out = new ArrayList<>();
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT replica FROM replica_start ORDER BY started_at")) {
      while (rs.next()) {
        out.add(rs.getString(1));
      }
    }
    return out;
  }

  private static List<SectionsFacts.Run> runs(Connection c) throws SQLException {
    List<SectionsFacts.Run> out = new ArrayList<>();
    try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT id, replica,"
        + " coalesce(token_seen, '-1'), (extract(epoch FROM at) * 1000)::bigint FROM settlement_run ORDER BY id")) {
      while (rs.next()) {
        out.add(new SectionsFacts.Run(rs.getLong(1), rs.getString(2), token(rs.getString(3)), rs.getLong(4)));
      }
    }
    return out;
  }

  /** The token a row was written with ({@code fencing.token}); -1 for none, -2 for one that is not a number. */
  private static long token(String text) {
    try {
      return Long.parseLong(text);
    } catch (NumberFormatException e) {
      return -2;
    }
  }

  private static Map<String, SectionsFacts.Orders> orders(Connection c) throws SQLException {
    Map<String, SectionsFacts.Orders> out = new LinkedHashMap<>();
    try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT replica, count(*),"
        + " count(token_seen) FROM orders GROUP BY replica ORDER BY replica")) {
      while (rs.next()) {
        out.put(rs.getString(1), new SectionsFacts.Orders(rs.getLong(2), rs.getLong(3)));
      }
    }
    return out;
  }
}
