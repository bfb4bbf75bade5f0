package dev.fencing.agent.it.host;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.AppStdin;
import dev.fencing.agent.it.apps.JdbcApp;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import dev.fencing.testing.PostgresServer;
import java.io.File;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code fencing.enabled=false}, however it arrives, leaves the JVM as if the agent were not attached: the application
 * runs, no status port opens, no lock is campaigned for, a JDBC write carries no token, no class of the agent's core
 * loads, and the agent says so in one line.
 */
class AgentSwitchIT {
  /**
   * Each form once, two on this build's Java and two on the newest: which classes load before the agent stays out
   * differs between Javas (the verifier), and every case checks them; reading a form is the agent's own logic, the
   * same on every Java.
   */
  static List<Arguments> forms() {
    List<Path> homes = AgentProcesses.javaHomes();
    List<Arguments> out = new ArrayList<>();
    List<String> forms = List.of("agent argument", "system property", "environment variable", "properties file");
    for (int i = 0; i < forms.size(); i++) {
      out.add(Arguments.of(forms.get(i), homes.get(i % homes.size())));
    }
    return out;
  }

  @ParameterizedTest(name = "fencing.enabled=false as {0} on {1}")
  @MethodSource("forms")
  void switchedOffTheAgentLeavesTheJvmUntouched(String form, Path javaHome) throws Exception {
    try (EtcdCluster etcd = EtcdCluster.single(); PostgresServer pg = PostgresServer.start()) {
      try (Connection c = DriverManager.getConnection(pg.jdbcUrl()); Statement s = c.createStatement()) {
        // Each row keeps the token its session carried, as the SQL fence reads it.
        s.execute("CREATE TABLE cell (id bigserial PRIMARY KEY, writer text NOT NULL,"
            + " token bigint DEFAULT nullif(current_setting('fencing.token', true), '')::bigint)");
      }
      // The same application with the agent on: holds the lock, its write carries the token.
      try (Run on = Run.start(javaHome, "switch-on", etcd, pg, null)) {
        String token = Http.jsonField(Http.awaitStatus(on.port, "\"state\":\"HOLDING\"", Duration.ofSeconds(20)),
            "token");
        assertThat(on.stdin.run("SQL INSERT INTO cell (writer) VALUES ('on')")).isEqualTo("OK 1");
        assertThat(query(pg, "SELECT token FROM cell WHERE writer = 'on'")).isEqualTo(token);
      }
      assertThat(etcd.etcdctl("get", "--prefix", "/fencing/locks/", "--keys-only").trim()).isEmpty();

      try (Run off = Run.start(javaHome, "switch-off", etcd, pg, form)) {
        assertThat(off.stdin.run("SQL INSERT INTO cell (writer) VALUES ('off')")).isEqualTo("OK 1");
        Thread.sleep(2000); // the agent on took well under this to hold the lock
        assertThat(query(pg, "SELECT coalesce(token::text, 'none') FROM cell WHERE writer = 'off'"))
            .as("token of the write").isEqualTo("none");
        assertThat(etcd.etcdctl("get", "--prefix", "/fencing/locks/", "--keys-only").trim())
            .as("lock keys in etcd").isEmpty();
        assertThat(refused(off.port)).as("status port %d refuses connections", off.port).isTrue();
        String out = off.jvm.output();
        List<String> agentLines = out.lines().filter(l -> l.startsWith("[fencing-agent]")).toList();
        assertThat(agentLines).as("the agent's log lines").hasSize(1);
        assertThat(agentLines.get(0)).startsWith("[fencing-agent] INFO off (fencing.enabled=false, " + source(form))
            .endsWith("): the agent leaves this JVM untouched");
        List<String> agentClasses = out.lines()
            .filter(l -> l.contains(" dev.fencing.agent.") && !l.contains(" dev.fencing.agent.it.")).toList();
        // The entry point and what decides to stay out; AgentClassLoader only as the verifier reads FencingAgent.
        assertThat(agentClasses).as("agent classes loaded").allMatch(l -> l.matches(
            ".* dev\\.fencing\\.agent\\.(FencingAgent|AgentClassLoader|AgentSwitch|EarlySettings|JdkTools)(\\$\\w+)?"
                + " source: .*"));
        assertThat(agentClasses).as("agent classes loaded").isNotEmpty();
        String threads = threadDump(javaHome, off.jvm);
        assertThat(threads).as("thread dump").contains("\"main\"").doesNotContain("fencing-agent");
        assertThat(off.jvm.isAlive()).isTrue();
      }
    }
  }

  private static String source(String form) {
    return switch (form) {
      case "agent argument" -> "agent argument enabled";
      case "system property" -> "system property fencing.enabled";
      case "environment variable" -> "environment variable FENCING_ENABLED";
      default -> "file ";
    };
  }

  private static boolean refused(int port) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 1000);
      return false;
    } catch (java.io.IOException e) {
      return true;
    }
  }

  private static String threadDump(Path javaHome, AgentJvm jvm) throws Exception {
    ProcessBuilder b = new ProcessBuilder(javaHome.resolve("bin/jcmd").toString(), Long.toString(jvm.pid()),
        "Thread.print").redirectErrorStream(true);
    b.environment().remove("JAVA_TOOL_OPTIONS");
    Process p = b.start();
    String text = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    assertThat(p.waitFor()).as("jcmd Thread.print: %s", text).isZero();
    return text;
  }

  static String query(PostgresServer pg, String sql) throws Exception {
    try (Connection c = DriverManager.getConnection(pg.jdbcUrl()); Statement s = c.createStatement();
        java.sql.ResultSet rs = s.executeQuery(sql)) {
      return rs.next() ? rs.getString(1) : null;
    }
  }

  /** The JDBC app with the agent, {@code fencing.enabled=false} given in {@code form} (null: not given). */
  private static final class Run implements AutoCloseable {
    final AgentJvm jvm;
    final int port;
    final AppStdin stdin;

    private Run(AgentJvm jvm, int port) {
      this.jvm = jvm;
      this.port = port;
      this.stdin = AppStdin.jdbc(jvm);
    }

    static Run start(Path javaHome, String name, EtcdCluster etcd, PostgresServer pg, String form) throws Exception {
      int port = Ports.freePort();
      String args = "lock=switch,lease.ttl=3s,etcd.endpoints=" + etcd.endpoints() + ",http.port=" + port;
      AgentJvm.Builder b = AgentJvm.builder().javaHome(javaHome)
          .name(name + "-" + (form == null ? "" : form.replace(' ', '-') + "-") + "java"
              + AgentProcesses.javaVersion(javaHome))
          .classpath(AgentProcesses.appClasspath() + File.pathSeparator + System.getProperty("fencing.it.postgresql.jar"))
          .mainClass(JdbcApp.class.getName()).args(pg.jdbcUrl());
      if (form != null) {
        b.jvmArg("-Xlog:class+load=info:stdout");
        switch (form) {
          case "agent argument" -> args += ",enabled=false";
          case "system property" -> b.sysProp("fencing.enabled", "false");
          case "environment variable" -> b.env("FENCING_ENABLED", "false");
          default -> {
            Path file = Files.createTempFile("fencing-switch-", ".properties");
            Files.writeString(file, "fencing.enabled=false\n");
            b.env("FENCING_CONFIG_FILE", file.toString());
          }
        }
      }
      Run r = new Run(b.agentArgs(args).start(), port);
      r.jvm.awaitOutput("APP STARTED", Duration.ofSeconds(20));
      return r;
    }

    @Override
    public void close() {
      jvm.close();
    }
  }
}
