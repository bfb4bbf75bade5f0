package dev.fencing.agent.it.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.apps.ApacheHttpApp;
import dev.fencing.testing.AgentJvm;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The Apache HttpClient 5 hook, classic and async default clients, with the oldest and the latest supported 5.x
 * loaded side by side in one application JVM per JDK: a mode is a version's client ("5.1 SYNC", "5.1 ASYNC").
 */
class ApacheHttpClientIT extends AbstractHttpClientIT {
  @Override
  protected String lock() {
    return "apache";
  }

  @Override
  protected List<Run> runs() {
    return AgentProcesses.javaHomes().stream().map(Run::new).toList();
  }

  /** The Apache HttpClient 5 versions of testing/library-versions, oldest first. */
  static List<String> versions() throws IOException {
    List<String> versions = AgentProcesses.libraryVersions("httpclient5");
    assertThat(versions).as("oldest and latest Apache HttpClient 5").hasSize(2);
    return versions;
  }

  @Override
  protected AgentJvm start(Run run, String agentArgs) throws IOException {
    AgentJvm app = AgentJvm.builder().javaHome(run.javaHome())
        .name("apache-java" + AgentProcesses.javaVersion(run.javaHome())).agentArgs(agentArgs)
        .classpath(AgentProcesses.appClasspath()).mainClass(ApacheHttpApp.class.getName())
        .args(versions().stream().map(v -> v + "=" + AgentProcesses.libraryJars("httpclient5", v))
            .toArray(String[]::new)).start();
    app.awaitOutput("APP STARTED", Duration.ofSeconds(30));
    for (String v : versions()) {
      assertThat(app.output()).contains("LOADED " + v + " httpclient5-" + v + ".jar");
    }
    return app;
  }

  @Override
  protected List<String> modes(Run run) {
    List<String> modes = new ArrayList<>();
    try {
      for (String v : versions()) {
        modes.add(v + " SYNC");
        modes.add(v + " ASYNC");
      }
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    return modes;
  }

  /** The caller's request object keeps only its own header; async answers say how the callback was called. */
  @Override
  protected String answered(String mode, int status) {
    return "STATUS " + status + (mode.endsWith("ASYNC") ? " callback=completed" : "") + " callerHeaders=[X-App]";
  }

  @Override
  protected String blocked(String mode, String message) {
    return super.blocked(mode, message) + (mode.endsWith("ASYNC")
        ? " callback=failed(" + BLOCKED_EXCEPTION + ") callerHeaders=[X-App]" : "");
  }

  /**
   * A POST's 307 on the classic client; a GET's on the async client, since 5.0's async client never completes a
   * re-sent request that has a body (without the agent too; fixed in later 5.x).
   */
  @Override
  protected List<Redirect> redirects(Run run) {
    return modes(run).stream()
        .map(m -> new Redirect(m, m.endsWith("ASYNC") ? "GET" : "POST", "/redirect", m.endsWith("ASYNC") ? "GET" : "POST"))
        .toList();
  }

  /** A retried attempt, after a 503 with Retry-After (the default retry strategy); async with a GET, as above. */
  @Override
  protected List<Case> whileHolding(Run run) {
    return List.of(new Case("every attempt of a request retried after a 503 carries the pair once", s -> {
      for (String mode : modes(run)) {
        String method = mode.endsWith("ASYNC") ? "GET" : "PUT";
        String path = "/flaky/" + mode.replace(' ', '-');
        s.send(mode, method, s.open, path, answered(mode, 200), s.tagged(method, path), s.tagged(method, path));
        s.countTagged(method, false);
        s.countTagged(method, false);
      }
    }));
  }
}
