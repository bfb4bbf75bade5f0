package dev.fencing.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReportCliTest {
  private static final String UNFENCED = "{\"inventory\":{\"mode\":\"observe\",\"maxDestinations\":500,"
      + "\"overflowTotal\":0,\"destinations\":[{\"lock\":\"ledger\",\"channel\":\"kafka\",\"destination\":\"events\","
      + "\"status\":\"unfenced\",\"tagged\":2,\"passed\":0,\"wouldBlock\":0,\"blocked\":0,\"exempt\":0,"
      + "\"rejections\":0,\"firstSeen\":\"2026-12-05T18:00:00Z\",\"lastSeen\":\"2026-12-05T18:00:00Z\"}]}}";

  @TempDir
  Path dir;

  private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
  private final PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);

  private String output() {
    return bytes.toString(StandardCharsets.UTF_8);
  }

  @Test
  void reportsASavedStatusAndFailsTheGateOnlyWhenAsked() throws Exception {
    Path saved = Files.writeString(dir.resolve("status.json"), UNFENCED);
    assertThat(Cli.run(new String[] {"report", saved.toString()}, out)).isZero();
    assertThat(output()).contains("unfenced topic events written under lock 'ledger'");
    assertThat(Cli.run(new String[] {"report", saved.toString(), "--fail-on-unfenced"}, out)).isEqualTo(1);
    bytes.reset();
    assertThat(Cli.run(new String[] {"report", "--json", saved.toString()}, out)).isZero();
    assertThat(output()).startsWith("{\"mode\":\"observe\",").contains("\"ready\":false");
  }

  @Test
  void doctorWithReportPrintsTheReportAfterItsChecks() throws Exception {
    Path saved = Files.writeString(dir.resolve("status.json"), UNFENCED);
    int port = dev.fencing.testing.Ports.freePort();
    int code = Cli.run(new String[] {"doctor", "lock=ledger", "etcd.endpoints=http://127.0.0.1:" + port,
        "etcd.timeout=500ms", "--report", saved.toString()}, out);
    assertThat(code).as("doctor failed: no etcd there").isEqualTo(1);
    assertThat(output()).contains("doctor: FAILED").contains("Fencing readiness: mode observe, 1 destination per lock")
        .contains("unfenced topic events written under lock 'ledger'");
    assertThat(output().indexOf("doctor: FAILED")).isLessThan(output().indexOf("Fencing readiness"));
  }

  @Test
  void readsTheStatusOfARunningAgentFromItsUrl() throws Exception {
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/status", ex -> {
      byte[] body = UNFENCED.getBytes(StandardCharsets.UTF_8);
      ex.sendResponseHeaders(200, body.length);
      ex.getResponseBody().write(body);
      ex.close();
    });
    server.start();
    try {
      int code = Cli.run(new String[] {"report", "http://127.0.0.1:" + server.getAddress().getPort()}, out);
      assertThat(code).isZero();
      assertThat(output()).contains("unfenced topic events");
    } finally {
      server.stop(0);
    }
  }

  @Test
  void badSourcesSayWhatWasWrongAndWhatIsExpected() throws Exception {
    assertThat(Cli.run(new String[] {"report"}, out)).isEqualTo(2);
    assertThat(output()).contains("report: no source given: the agent's status URL (fencing.http.port) or a file "
        + "holding its /status JSON");
    bytes.reset();
    assertThat(Cli.run(new String[] {"report", dir.resolve("missing.json").toString()}, out)).isEqualTo(2);
    assertThat(output()).contains("missing.json: no such file (expected an http:// URL of the agent or a file with "
        + "its /status JSON)");
    bytes.reset();
    Path other = Files.writeString(dir.resolve("other.json"), "{\"status\":\"UP\"}");
    assertThat(Cli.run(new String[] {"report", other.toString()}, out)).isEqualTo(2);
    assertThat(output()).contains("no \"inventory\" object");
    bytes.reset();
    int port = dev.fencing.testing.Ports.freePort();
    assertThat(Cli.run(new String[] {"report", "http://127.0.0.1:" + port}, out)).isEqualTo(2);
    assertThat(output()).contains("cannot read http://127.0.0.1:" + port + "/status")
        .contains("(expected a running agent with fencing.http.port set)");
    bytes.reset();
    assertThat(Cli.run(new String[] {"report", "x.json", "--strict"}, out)).isEqualTo(2);
    assertThat(output()).contains("report: unknown option '--strict' (expected --json or --fail-on-unfenced)");
  }
}
