package dev.fencing.agent.cli;

import dev.fencing.agent.report.JsonText;
import dev.fencing.agent.report.ReadinessReport;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code report <status URL or saved JSON> [--json] [--fail-on-unfenced]}: the fencing readiness report of a running
 * agent ({@code http://host:port}, its {@code /status}) or of a saved /status document. Exit 0 printed, 1 with
 * {@code --fail-on-unfenced} when a lock's side effect went to an unfenced destination, 2 bad arguments or a source
 * that is not an agent's /status.
 */
final class ReportCli {
  static final String USAGE = "usage: report <http://host:port[/status] | status.json> [--json] [--fail-on-unfenced]";

  private ReportCli() {}

  static int run(String[] args, PrintStream out) {
    boolean json = false;
    boolean gate = false;
    List<String> sources = new ArrayList<>();
    for (String a : args) {
      switch (a) {
        case "--json":
          json = true;
          break;
        case "--fail-on-unfenced":
          gate = true;
          break;
        case "--help":
        case "-h":
          out.println(USAGE);
          out.println("  --json              the machine-readable form (for CI gates)");
          out.println("  --fail-on-unfenced  exit 1 while a side effect of a lock goes to an unfenced destination");
          return 0;
        default:
          if (a.startsWith("--")) {
            out.println("report: unknown option '" + a + "' (expected --json or --fail-on-unfenced)");
            out.println(USAGE);
            return 2;
          }
          sources.add(a);
      }
    }
    if (sources.size() != 1) {
      out.println("report: " + (sources.isEmpty() ? "no source given" : "one source expected, got " + sources)
          + ": the agent's status URL (fencing.http.port) or a file holding its /status JSON");
      out.println(USAGE);
      return 2;
    }
    ReadinessReport report;
    try {
      report = ReadinessReport.of(JsonText.parse(read(sources.get(0))));
    } catch (IllegalArgumentException | IOException e) {
      out.println("report: " + sources.get(0) + ": " + e.getMessage());
      return 2;
    }
    out.print(json ? report.json() + "\n" : report.text());
    return gate && !report.leaderOnlyUnfenced().isEmpty() ? 1 : 0;
  }

  /** The /status document: fetched from an agent's endpoint, or read from a file. */
  static String read(String source) throws IOException {
    if (source.startsWith("http://") || source.startsWith("https://")) {
      URI uri;
      try {
        uri = URI.create(source);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("not a valid URL (expected http://host:port or http://host:port/status)");
      }
      if (uri.getHost() == null) {
        throw new IllegalArgumentException("no host in the URL (expected http://host:port or http://host:port/status)");
      }
      if (uri.getPath() == null || uri.getPath().isEmpty() || uri.getPath().equals("/")) {
        uri = uri.resolve("/status");
      }
      HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
      try {
        HttpResponse<String> r = client.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).GET().build(),
            HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
          throw new IOException("GET " + uri + " answered " + r.statusCode() + " (expected 200 from the agent's "
              + "/status endpoint, fencing.http.port)");
        }
        return r.body();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted while reading " + uri);
      } catch (IOException e) {
        if (e.getMessage() != null && e.getMessage().startsWith("GET ")) {
          throw e;
        }
        throw new IOException("cannot read " + uri + ": " + (e.getMessage() == null ? e.getClass().getSimpleName()
            : e.getMessage()) + " (expected a running agent with fencing.http.port set)");
      }
    }
    try {
      return Files.readString(Path.of(source));
    } catch (NoSuchFileException e) {
      throw new IOException("no such file (expected an http:// URL of the agent or a file with its /status JSON)");
    }
  }
}
