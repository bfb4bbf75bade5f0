package dev.fencing.agent.it.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.AppStdin;
import dev.fencing.agent.it.apps.ExemptionsApp;
import dev.fencing.agent.it.kafka.KafkaProducerIT;
import dev.fencing.fence.http.FenceHttpFilter;
import dev.fencing.fence.store.FencePolicy;
import dev.fencing.fence.http.HttpFence;
import dev.fencing.fence.store.InMemoryFenceStore;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.Http;
import dev.fencing.testing.KafkaBroker;
import dev.fencing.testing.PostgresServer;
import dev.fencing.testing.Ports;
import java.io.File;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The readiness report of a real application (JDBC to PostgreSQL, the JDK HttpClient, a KafkaProducer), read from its
 * agent's /status with {@code java -jar fencing-agent.jar report}: attached in observe mode while it holds the lock,
 * the report names every destination with its status and counts and prints the {@code sql install} command for the
 * unfenced table; that command, run as printed, makes the next run (enforce mode, a standby) report the table fenced.
 * Then, holding the lock until its lease expires (etcd gone): the commit the agent blocks counts on the table the
 * transaction wrote, the producer batch it fails in the buffer on its topic, and the writes a caller exemption rule
 * passed (a Flyway migration) on their tables under that rule; the inventory's cap is a setting.
 */
class ReadinessReportIT {
  private static final String LOCK = "ledger";

  @TempDir
  Path dir;

  @Test
  void theReportNamesEachDestinationAndItsSqlInstallCommandFencesTheTable() throws Exception {
    List<Path> homes = AgentProcesses.javaHomes();
    Path java17 = homes.get(0);
    Path newest = homes.get(homes.size() - 1);
    HttpServer fenced = server(new FenceHttpFilter(new HttpFence(FencePolicy.forLocks(LOCK).build(),
        new InMemoryFenceStore())));
    HttpServer plain = server(null);
    try (KafkaBroker broker = KafkaBroker.start(); EtcdCluster etcd = EtcdCluster.single();
        PostgresServer pg = PostgresServer.start()) {
      String url = pg.jdbcUrl();
      try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
        s.execute("CREATE TABLE orders (id INT PRIMARY KEY)");
        s.execute("CREATE TABLE payments (id INT PRIMARY KEY)");
        s.execute("CREATE TABLE notes (id INT PRIMARY KEY)");
        s.execute("CREATE DATABASE migrated"); // Flyway's: a schema with no tables yet
      }
      String migrated = pg.jdbcUrl("migrated");
      String driver = System.getProperty("fencing.it.postgresql.jar");
      assertThat(cli(java17, "sql", "install", "--jdbc-url", url, "--driver-jar", driver, "--table", "payments",
          "--lock", LOCK)).startsWith("0 ");
      int fencedPort = fenced.getAddress().getPort();
      int plainPort = plain.getAddress().getPort();
      String args = "lock=" + LOCK + ",etcd.endpoints=" + etcd.endpoints() + ",fenced.http=127.0.0.1:" + fencedPort
          + ",exempt.kafka=audit-*";

      // 1. Observe mode, holding the lock: every side effect tagged; the report says what to do.
      String report;
      try (App app = App.start(java17, broker, args + ",mode=observe", "HOLDING")) {
        assertThat(app.run("SQL " + url + " INSERT INTO orders VALUES (1)")).isEqualTo("OK 1");
        assertThat(app.run("SQL " + url + " UPDATE orders SET id = 2 WHERE id = 1")).isEqualTo("OK 1");
        assertThat(app.run("SQL " + url + " INSERT INTO payments VALUES (1)")).isEqualTo("OK 1");
        assertThat(app.run("HTTP POST http://127.0.0.1:" + plainPort + "/mail")).isEqualTo("OK 200");
        assertThat(app.run("HTTP PUT http://127.0.0.1:" + fencedPort + "/stock")).isEqualTo("OK 200");
        assertThat(app.run("KAFKA ledger-events e1")).isEqualTo("OK sent");
        assertThat(app.run("KAFKA audit-log a1")).isEqualTo("OK sent");
        String status = "http://127.0.0.1:" + app.port;
        report = cli(java17, "report", status);
        assertThat(cli(java17, "report", status, "--json", "--fail-on-unfenced"))
            .as("the CI gate fails while a leader-only write goes to an unfenced destination")
            .startsWith("1 {\"mode\":\"observe\",").contains("\"leaderOnlyUnfenced\":3,\"ready\":false");
        Files.writeString(dir.resolve("status.json"), Http.get(status + "/status"));
      }
      assertThat(report).startsWith("0 Fencing readiness: mode observe, 6 destinations per lock, 3 reached unfenced "
          + "under a lock\n");
      assertThat(report).containsPattern(row("jdbc", Pattern.quote(url), "orders", "unfenced", 2, 0, 0, 0, 0));
      assertThat(report).containsPattern(row("jdbc", Pattern.quote(url), "payments", "fenced", 1, 0, 0, 0, 0));
      assertThat(report).containsPattern(row("http", "http://127.0.0.1:" + plainPort, "POST", "unfenced", 1, 0, 0, 0,
          0));
      assertThat(report).containsPattern(row("http", "http://127.0.0.1:" + fencedPort, "PUT", "fenced", 1, 0, 0, 0,
          0));
      assertThat(report).containsPattern(row("kafka", "ledger-events", "", "unfenced", 1, 0, 0, 0, 0));
      assertThat(report).containsPattern(row("kafka", "audit-log", "", "exempt", 0, 0, 0, 0, 1));
      assertThat(report).contains("unfenced HTTP service http://127.0.0.1:" + plainPort + " (POST) called under lock "
          + "'ledger': put the HTTP fence (fences/http) in front of it");
      assertThat(report).contains("unfenced topic ledger-events written under lock 'ledger': add the Kafka consumer "
          + "fence (fences/kafka)");
      assertThat(report).contains("Exemptions that matched:\n  - exempt: topic audit-log matched fencing.exempt.kafka");
      Matcher install = Pattern.compile("install the SQL fence: (java -jar fencing-agent\\.jar sql install .*)")
          .matcher(report);
      assertThat(install.find()).as("a sql install command in:\n" + report).isTrue();
      assertThat(install.group(1)).contains("--table orders --lock ledger");

      // 2. The command, run as printed (a shell, beside fencing-agent.jar), fences the table.
      Files.createSymbolicLink(dir.resolve("fencing-agent.jar"), Path.of(System.getProperty("fencing.agent.jar")));
      ProcessBuilder shell = new ProcessBuilder("bash", "-c", install.group(1)).directory(dir.toFile())
          .redirectErrorStream(true);
      shell.environment().put("PATH", java17.resolve("bin") + File.pathSeparator + System.getenv("PATH"));
      Process p = shell.start();
      String printed = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(p.exitValue()).as(printed).isZero();

      // 3. Enforce mode, a standby (another JVM holds the lock), on the newest Java: blocked, and orders is fenced.
      // A bad inventory cap is a warning naming what is expected; the default is kept.
      try (AgentProcesses.Agent holder = AgentProcesses.start(java17, "holder", "lock=" + LOCK + ",etcd.endpoints="
          + etcd.endpoints())) {
        holder.awaitState("HOLDING", Duration.ofSeconds(15));
        try (App app = App.start(newest, broker, args + ",inventory.max-destinations=lots", "STANDBY")) {
          assertThat(app.jvm().output()).contains("fencing.inventory.max-destinations='lots'",
              "expected an integer from 1 to 100000", "the default 500 is kept");
          assertThat(Http.get("http://127.0.0.1:" + app.port + "/status")).contains("\"maxDestinations\":500,");
          assertThat(app.run("SQL " + url + " INSERT INTO orders VALUES (3)")).startsWith("ERR FN003 ");
          assertThat(app.run("HTTP POST http://127.0.0.1:" + plainPort + "/mail")).startsWith("ERR ");
          assertThat(app.run("KAFKA ledger-events e2")).startsWith("ERR ");
          report = cli(java17, "report", "http://127.0.0.1:" + app.port + "/status");
        }
      }
      assertThat(report).startsWith("0 Fencing readiness: mode enforce, 3 destinations per lock, 2 reached unfenced");
      assertThat(report).containsPattern(row("jdbc", Pattern.quote(url), "orders", "fenced", 0, 0, 0, 1, 0));
      assertThat(report).containsPattern(row("http", "http://127.0.0.1:" + plainPort, "POST", "unfenced", 0, 0, 0, 1,
          0));
      assertThat(report).containsPattern(row("kafka", "ledger-events", "", "unfenced", 0, 0, 0, 1, 0));
      assertThat(report).doesNotContain("sql install --jdbc-url");

      // The saved /status of the first run still reports as it did.
      assertThat(cli(java17, "report", dir.resolve("status.json").toString()))
          .containsPattern(row("jdbc", Pattern.quote(url), "orders", "unfenced", 2, 0, 0, 0, 0));

      // 4. Enforce mode, holding until the lease expires: what the agent refuses after the side effect was made.
      Path migrations = Files.createDirectories(dir.resolve("migrations"));
      Files.writeString(migrations.resolve("V1__note.sql"), "CREATE TABLE notes (id INT PRIMARY KEY);\n"
          + "INSERT INTO notes VALUES (7);\n");
      try (App app = App.start(java17, broker, args + ",lease.ttl=3s,lease.safety-margin=500ms,"
          + "inventory.max-destinations=40", "HOLDING")) {
        assertThat(app.run("BEGIN " + url)).isEqualTo("OK begun");
        assertThat(app.run("SQL " + url + " INSERT INTO notes VALUES (1)")).isEqualTo("OK 1");
        assertThat(app.run("SQL " + url + " INSERT INTO orders VALUES (4)")).isEqualTo("OK 1");
        assertThat(app.run("LINGER ledger-events late")).isEqualTo("OK queued");
        etcd.nodes().forEach(n -> n.kill());
        Http.awaitStatus(app.port, "\"state\":\"EXPIRED\"", Duration.ofSeconds(10));
        assertThat(app.run("COMMIT " + url)).startsWith("ERR FN003 ");
        assertThat(app.run("LINGERED")).startsWith("ERR ");
        assertThat(app.run("FLYWAY " + migrated + " " + migrations)).isEqualTo("OK 1");
        String status = "http://127.0.0.1:" + app.port;
        assertThat(Http.get(status + "/status")).contains("\"maxDestinations\":40,");
        report = cli(java17, "report", status);
        assertThat(cli(java17, "report", status, "--json")).contains("\"table\":\"notes\"")
            .containsPattern("\"table\":\"notes\",[^}]*\"blockedCommits\":1,")
            .containsPattern("\"destination\":\"ledger-events\",[^}]*\"failedBatches\":1,\"failedRecords\":1,")
            .containsPattern("\"table\":\"notes\",[^}]*\"exemptByCaller\":\\{\"org.flywaydb.\":1}");
      }
      assertThat(report).contains("Refused after the side effect was sent:\n");
      assertThat(report).contains("  - table notes of " + url + ", lock 'ledger': 1 commit of transactions that wrote "
          + "there blocked (rolled back) after the lease's deadline\n");
      assertThat(report).contains("  - table orders of " + url + ", lock 'ledger': 1 commit of transactions that "
          + "wrote there blocked");
      assertThat(report).contains("  - topic ledger-events, lock 'ledger': 1 producer batch (1 record) failed in the "
          + "producer's buffer: tagged under a lease that expired before they were sent\n");
      assertThat(report).contains("  - exempt by caller rule org.flywaydb. (fencing.exempt.callers): 1 write to table "
          + "notes of " + migrated + " under lock 'ledger' passed untagged where they would have been blocked");
      for (String[] rows : new String[][] {{url, "0"}, {migrated, "1"}}) {
        try (Connection c = DriverManager.getConnection(rows[0]); Statement s = c.createStatement();
            java.sql.ResultSet rs = s.executeQuery("SELECT count(*) FROM notes")) {
          assertThat(rs.next() ? rs.getString(1) : null).as("rows of notes in " + rows[0]).isEqualTo(rows[1]);
        }
      }
    } finally {
      fenced.stop(0);
      plain.stop(0);
    }
  }

  /** A table row of the report: lock ledger, the destination, its status and counts (tagged ... exempt). */
  private static String row(String channel, String destination, String detail, String status, long tagged,
      long passed, long wouldBlock, long blocked, long exempt) {
    return "(?m)^ledger +" + channel + " +" + destination + " +" + (detail.isEmpty() ? "" : detail + " +") + status
        + " +" + tagged + " +" + passed + " +" + wouldBlock + " +" + blocked + " +" + exempt + " +0 +\\S+$";
  }

  /** {@code java -jar fencing-agent.jar <args>}: "exit output". */
  private static String cli(Path javaHome, String... args) {
    try (AgentJvm cli = AgentJvm.builder().javaHome(javaHome).name("cli").noAgent()
        .executableJar(Path.of(System.getProperty("fencing.agent.jar"))).args(args).start()) {
      int exit = cli.awaitExit(Duration.ofSeconds(60));
      return exit + " " + cli.output();
    }
  }

  /** An HTTP service answering 200 to everything, behind {@code filter} when given. */
  private static HttpServer server(com.sun.net.httpserver.Filter filter) throws Exception {
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    var context = server.createContext("/", ex -> {
      ex.getRequestBody().readAllBytes();
      ex.sendResponseHeaders(200, -1);
      ex.close();
    });
    if (filter != null) {
      context.getFilters().add(filter);
    }
    server.start();
    return server;
  }

  /** The application: ExemptionsApp with the agent, its status endpoint on {@code port}. */
  private record App(AgentJvm jvm, AppStdin stdin, int port) implements AutoCloseable {
    static App start(Path javaHome, KafkaBroker broker, String agentArgs, String state) throws Exception {
      int port = Ports.freePort();
      String classpath = AgentProcesses.appClasspath() + File.pathSeparator
          + System.getProperty("fencing.it.postgresql.jar") + File.pathSeparator
          + KafkaProducerIT.clientsJar(System.getProperty("fencing.it.kafka.clients.latest")) + File.pathSeparator
          + System.getProperty("fencing.it.slf4j.jar") + File.pathSeparator + AgentProcesses.libraries("flyway-");
      AgentJvm jvm = AgentJvm.builder().javaHome(javaHome).name("report-app").agentArgs(agentArgs + ",http.port="
          + port).classpath(classpath).mainClass(ExemptionsApp.class.getName()).args(broker.bootstrapServers())
          .start();
      try {
        jvm.awaitOutput("APP STARTED", Duration.ofSeconds(20));
        Http.awaitStatus(port, "\"state\":\"" + state + "\"", Duration.ofSeconds(15));
        return new App(jvm, AppStdin.marked(jvm, "> "), port);
      } catch (RuntimeException | Error e) {
        jvm.close();
        throw e;
      }
    }

    String run(String command) throws Exception {
      return stdin.run(command);
    }

    @Override
    public void close() {
      jvm.close();
    }
  }
}
