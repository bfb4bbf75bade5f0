package dev.fencing.agent.it.host;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.AppStdin;
import dev.fencing.agent.it.jdbc.JdbcIT;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.fencing.agent.it.AgentProcesses.Agent;
import dev.fencing.agent.it.jdbc.JdbcIT.JdbcJvm;
import dev.fencing.agent.it.apps.HttpApp;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.DeleteOption;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The agent is a guest: a hook that fails never breaks the application's call, lease churn does not grow the thread
 * count, and what the hooks remember per connection, statement or request goes away with those objects.
 */
class HostSafetyIT {
  static List<Path> javaHomes() {
    return AgentProcesses.javaHomes();
  }

  private static final String H2 = "fencing.it.h2.jar";
  /** One per entry of the agent's per-object caches (statements, connections). */
  private static final String WEAK_KEY = "dev.fencing.agent.instrumentation.api.WeakIdentityCache$WeakKey";

  static List<Path> newestJava() {
    return AgentProcesses.newestJava();
  }

  /** What a failing hook leaves behind is the agent's own logic, the same on every Java: this build's. */
  static List<Path> currentJava() {
    return List.of(AgentProcesses.javaHomes().get(0));
  }

  @ParameterizedTest
  @MethodSource("currentJava")
  void aFailingHookNeverBreaksTheCallNorLaterCallsAndFailModeDecides(Path javaHome) throws Exception {
    try (EtcdCluster etcd = EtcdCluster.single();
        JdbcJvm closed = new JdbcJvm(javaHome, "hookfail-closed", "lock=hf-closed,etcd.endpoints=" + etcd.endpoints(),
            "jdbc:h2:mem:hf;DB_CLOSE_DELAY=-1", JdbcIT.classpath(H2));
        JdbcJvm open = new JdbcJvm(javaHome, "hookfail-open",
            "lock=hf-open,fail-mode=open,etcd.endpoints=" + etcd.endpoints(), "jdbc:h2:mem:hf;DB_CLOSE_DELAY=-1",
            JdbcIT.classpath(H2))) {
      String token = Http.jsonField(Http.awaitStatus(closed.port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15)), "token");
      Http.awaitStatus(open.port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15));

      // fail-mode=closed: a write the hook could not handle is blocked with the usual SQLException (FN003), whether
      // the statement's getConnection() threw a RuntimeException or an Error; a read goes on.
      assertThat(closed.run("SQL CREATE TABLE t(v INT)")).startsWith("OK");
      assertThat(closed.run("FAULTY runtime INSERT INTO t VALUES (1)"))
          .startsWith("ERR FN003 Fencing Agent blocked a jdbc side effect: lock 'hf-closed', token " + token)
          .contains("the agent failed while handling this call");
      assertThat(closed.run("FAULTY error INSERT INTO t VALUES (2)")).startsWith("ERR FN003");
      assertThat(closed.run("FAULTY error SELECT count(*) FROM t")).isEqualTo("OK -1");
      // The same thread's next statements are decided, tagged and counted as ever: nothing of the failure stayed
      // behind (a re-entry guard left entered by an Error escaping the hook would let every later statement on the
      // thread pass unseen, even with the lease lost).
      assertThat(closed.run("SQL INSERT INTO t VALUES (3)")).isEqualTo("OK 1");
      assertThat(closed.run("QUERY SELECT count(*) FROM t")).isEqualTo("ROW 1");
      String metrics = Http.get("http://127.0.0.1:" + closed.port + "/metrics");
      assertThat(metrics)
          .contains("fencing_hook_failures_total{channel=\"jdbc\",lock=\"hf-closed\"} 3.0")
          .contains("fencing_side_effects_total{channel=\"jdbc\",fenced=\"false\",lock=\"hf-closed\",outcome=\"blocked\"} 2.0")
          .contains("fencing_side_effects_total{channel=\"jdbc\",fenced=\"false\",lock=\"hf-closed\",outcome=\"tagged\"} 2.0");
      // Logged once, not once per call (fencing.log.event-interval).
      String out = closed.jvm.output();
      assertThat(out.lines().filter(l -> l.contains("the jdbc hook failed"))).hasSize(1);
      assertThat(out).contains("WARN the jdbc hook failed; the call was blocked (fencing.fail-mode=closed): "
          + "IllegalStateException driver bug: no connection");

      // fail-mode=open: the same writes run, untagged.
      assertThat(open.run("SQL CREATE TABLE t(v INT)")).startsWith("OK");
      assertThat(open.run("FAULTY runtime INSERT INTO t VALUES (1)")).isEqualTo("OK 1");
      assertThat(open.run("FAULTY error INSERT INTO t VALUES (2)")).isEqualTo("OK 1");
      assertThat(open.run("SQL INSERT INTO t VALUES (3)")).isEqualTo("OK 1");
      assertThat(open.run("QUERY SELECT count(*) FROM t")).isEqualTo("ROW 3");
      assertThat(Http.get("http://127.0.0.1:" + open.port + "/metrics"))
          .contains("fencing_hook_failures_total{channel=\"jdbc\",lock=\"hf-open\"} 2.0")
          .contains("fencing_side_effects_total{channel=\"jdbc\",fenced=\"false\",lock=\"hf-open\",outcome=\"passed\"} 2.0")
          .contains("fencing_side_effects_total{channel=\"jdbc\",fenced=\"false\",lock=\"hf-open\",outcome=\"tagged\"} 2.0");
      assertThat(open.jvm.output()).contains("the call went on untagged");
      assertThat(closed.jvm.isAlive()).isTrue();
      assertThat(open.jvm.isAlive()).isTrue();
    }
  }

  /**
   * On the newest Java only: each loss is a real etcd delete, revoke and campaign (about 0.1 s), and what could leak
   * (the lease keeper's and jetcd's executors, gRPC/Vert.x event loops) is the agent's own code, the same on every
   * Java; what the hooks keep per object (the garbage collector's and the JDK's classes' doing) runs on 17 and 25. Three hundred losses are enough: a thread kept per loss, or per ten,
   * shows as tens of threads between loss 100 and loss 300, against an allowance of two.
   */
  @ParameterizedTest
  @MethodSource("newestJava")
  void threadCountStaysFlatOverHundredsOfLeaseLossesAndReacquisitions(Path javaHome) throws Exception {
    int losses = 300;
    int warmup = 50;
    try (EtcdCluster etcd = EtcdCluster.single();
        Agent agent = AgentProcesses.start(javaHome, "churn", "lock=churn,etcd.endpoints=" + etcd.endpoints());
        Client client = Client.builder().endpoints(etcd.endpoints().split(",")).build()) {
      agent.awaitState("HOLDING", Duration.ofSeconds(15));
      ByteSequence prefix = ByteSequence.from("/fencing/locks/churn/", StandardCharsets.UTF_8);
      DeleteOption all = DeleteOption.builder().isPrefix(true).build();
      long start = System.nanoTime();
      List<String> before = List.of();
      List<Integer> samples = new ArrayList<>();
      for (int i = 1; i <= losses; i++) {
        // An operator (or etcd) removes the lock key; the agent counts the loss and campaigns again.
        assertThat(client.getKVClient().delete(prefix, all).get(5, TimeUnit.SECONDS).getDeleted()).as("loss %d", i)
            .isEqualTo(1);
        awaitAcquisitions(agent, i + 1);
        if (i == warmup) {
          before = threads(agent.jvm);
        }
        if (i % 50 == 0) {
          samples.add(threads(agent.jvm).size());
        }
      }
      List<String> after = threads(agent.jvm);
      System.out.printf("java %s: %d losses in %d ms; threads after %d losses %d, every 50: %s, at the end %d: %s%n",
          AgentProcesses.javaVersion(javaHome), losses, (System.nanoTime() - start) / 1_000_000, warmup, before.size(),
          samples, after.size(), after);
      assertThat(after.size()).as("threads after %d losses %s, after %d %s; every 50: %s", losses, after, warmup,
          before, samples).isLessThanOrEqualTo(before.size() + 2);
      assertThat(samples.get(samples.size() - 1) - samples.get(1)).as("growth from loss 100 to %d: %s", losses, samples)
          .isLessThanOrEqualTo(2);
      String metrics = agent.metrics();
      assertThat(metrics).contains("fencing_lease_acquisitions_total{lock=\"churn\"} " + (losses + 1) + ".0")
          .contains("fencing_lease_losses_total{lock=\"churn\",reason=\"key_deleted\"} " + losses + ".0");
      assertThat(agent.state()).isEqualTo("HOLDING");
    }
  }

  @ParameterizedTest
  @MethodSource("javaHomes")
  void whatHooksKeepPerConnectionStatementOrRequestGoesAwayWithIt(Path javaHome) throws Exception {
    int connections = 10_000;
    int statements = 10;
    try (EtcdCluster etcd = EtcdCluster.single();
        JdbcJvm app = new JdbcJvm(javaHome, "bounded-jdbc", "lock=bounded,etcd.endpoints=" + etcd.endpoints(),
            "jdbc:h2:mem:bounded;DB_CLOSE_DELAY=-1", JdbcIT.classpath(H2))) {
      Http.awaitStatus(app.port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15));
      assertThat(app.run("SQL CREATE TABLE c(id INT PRIMARY KEY, v INT)")).startsWith("OK");
      assertThat(app.run("SQL INSERT INTO c VALUES (1, 0)")).isEqualTo("OK 1");
      long start = System.nanoTime();
      assertThat(app.run("CHURN " + connections + " " + statements + " UPDATE c SET v = v + 1 WHERE id = 1"))
          .isEqualTo("OK " + connections * statements);
      long churnMs = (System.nanoTime() - start) / 1_000_000;
      // Entries of collected keys are dropped by the agent's next use of its caches (no thread of its own to do it):
      // collect, run one statement, count; the reference handler may hand over the cleared keys a moment after a GC,
      // hence a few rounds.
      Map<String, Long> live = Map.of();
      for (int round = 0; round < 5; round++) {
        assertThat(app.run("GC")).isEqualTo("OK gc");
        live = histogram(javaHome, app.jvm);
        if (live.getOrDefault(WEAK_KEY, 0L) < 100) {
          break;
        }
      }
      System.out.printf("java %s: %d connections x %d statements in %d ms; live after GC: %s%n",
          AgentProcesses.javaVersion(javaHome), connections, statements, churnMs, live);
      // Every statement went through the hook (and was remembered while it lived) ...
      assertThat(Http.get("http://127.0.0.1:" + app.port + "/metrics")).contains(
          "fencing_side_effects_total{channel=\"jdbc\",fenced=\"false\",lock=\"bounded\",outcome=\"tagged\"} "
              + (connections * statements + 2) + ".0");
      // ... and neither the agent's entries nor the driver's objects outlive them.
      assertThat(live.getOrDefault(WEAK_KEY, 0L)).isLessThan(100);
      assertThat(live.getOrDefault("org.h2.jdbc.JdbcConnection", 0L)).isLessThan(50);
      assertThat(live.getOrDefault("org.h2.jdbc.JdbcPreparedStatement", 0L)).isLessThan(50);
    }

    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/", ex -> {
      ex.getRequestBody().readAllBytes();
      ex.sendResponseHeaders(200, -1);
      ex.close();
    });
    server.start();
    int requests = 5_000;
    int port = Ports.freePort();
    try (EtcdCluster etcd = EtcdCluster.single();
        AgentJvm jvm = AgentJvm.builder().javaHome(javaHome)
            .name("bounded-http-java" + AgentProcesses.javaVersion(javaHome))
            .classpath(AgentProcesses.appClasspath()).mainClass(HttpApp.class.getName())
            .agentArgs("lock=bounded-http,http.port=" + port + ",etcd.endpoints=" + etcd.endpoints())
            .start()) {
      jvm.awaitOutput("APP STARTED", Duration.ofSeconds(20));
      Http.awaitStatus(port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15));
      long start = System.nanoTime();
      assertThat(AppStdin.http(jvm).run("CHURN " + requests + " http://127.0.0.1:" + server.getAddress().getPort() + "/w"))
          .isEqualTo("STATUS churned " + requests);
      long churnMs = (System.nanoTime() - start) / 1_000_000;
      Map<String, Long> live = histogram(javaHome, jvm);
      System.out.printf("java %s: %d HTTP requests in %d ms; live after GC: %s%n", AgentProcesses.javaVersion(javaHome),
          requests, churnMs, live);
      assertThat(Http.get("http://127.0.0.1:" + port + "/metrics")).contains(
          "fencing_side_effects_total{channel=\"http\",fenced=\"false\",lock=\"bounded-http\",outcome=\"tagged\"} "
              + requests + ".0");
      // The caller's requests and the tagged copies the agent sent in their place are gone.
      assertThat(live.getOrDefault("jdk.internal.net.http.ImmutableHttpRequest", 0L)).isLessThan(50);
      assertThat(live.getOrDefault("jdk.internal.net.http.HttpRequestImpl", 0L)).isLessThan(50);
    } finally {
      server.stop(0);
    }
  }

  /** Waits (polling /status, no sleeps beyond 2 ms) until the agent has acquired the lease {@code n} times. */
  private static void awaitAcquisitions(Agent agent, int n) throws InterruptedException {
    String want = "\"acquisitionsTotal\":" + n + ",";
    long end = System.nanoTime() + Duration.ofSeconds(15).toNanos();
    String last = null;
    while (System.nanoTime() < end) {
      last = agent.status();
      if (last.contains(want) && last.contains("\"state\":\"HOLDING\"")) {
        return;
      }
      Thread.sleep(2);
    }
    throw new AssertionError("acquisition " + n + " did not happen within 15 s; last status " + last + "\n"
        + agent.jvm.output().lines().filter(l -> l.contains("[fencing-agent]")).reduce("", (a, b) -> a + "\n" + b));
  }

  /**
   * The JVM's live threads, by name, from the kernel (Linux /proc/<pid>/task/<tid>/comm, names cut at 15 characters),
   * less the JVM's own compiler and GC workers, which HotSpot starts and stops with load: the point is the
   * application's and the agent's threads.
   */
  private static List<String> threads(AgentJvm jvm) throws Exception {
    List<String> names = new ArrayList<>();
    try (var tasks = Files.list(Path.of("/proc/" + jvm.pid() + "/task"))) {
      for (Path task : tasks.toList()) {
        try {
          String name = Files.readString(task.resolve("comm")).trim();
          if (!name.startsWith("C1 CompilerThre") && !name.startsWith("C2 CompilerThre") && !name.startsWith("G1 ")
              && !name.startsWith("GC Thread")) {
            names.add(name);
          }
        } catch (java.io.IOException exited) {
          // the thread ended while we listed them
        }
      }
    }
    names.sort(null);
    return names;
  }

  private static final Pattern HISTOGRAM_LINE = Pattern.compile("^\\s*\\d+:\\s+(\\d+)\\s+\\d+\\s+(\\S+)");

  /** Live instances per class after a full GC ({@code jcmd GC.class_histogram}, which collects first). */
  private static Map<String, Long> histogram(Path javaHome, AgentJvm jvm) throws Exception {
    Process p = new ProcessBuilder(javaHome.resolve("bin/jcmd").toString(), Long.toString(jvm.pid()), "GC.class_histogram")
        .redirectErrorStream(true).start();
    String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as("jcmd: %s", text).isZero();
    Map<String, Long> counts = new HashMap<>();
    for (String line : text.split("\n")) {
      Matcher m = HISTOGRAM_LINE.matcher(line);
      if (m.find()) {
        counts.merge(m.group(2), Long.parseLong(m.group(1)), Long::sum);
      }
    }
    assertThat(counts).as("jcmd output: %s", text).isNotEmpty();
    Map<String, Long> interesting = new HashMap<>();
    for (Map.Entry<String, Long> e : counts.entrySet()) {
      if (e.getKey().contains("WeakIdentityCache") || e.getKey().startsWith("org.h2.jdbc.")
          || e.getKey().startsWith("jdk.internal.net.http.") && e.getKey().contains("Request")) {
        interesting.put(e.getKey(), e.getValue());
      }
    }
    return interesting;
  }
}
