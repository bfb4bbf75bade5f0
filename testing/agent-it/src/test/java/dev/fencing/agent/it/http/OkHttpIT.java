package dev.fencing.agent.it.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.apps.OkHttpApp;
import dev.fencing.testing.AgentJvm;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The OkHttp hook (execute and enqueue, through an application and a network interceptor) on the oldest 4.x, the
 * latest 4.x and the latest 5.x: the older versions on this build's Java, the newest on Java 25 (the hook is woven on
 * both; what a request carries is the agent's and the library's logic, the same on every Java); and the newest once
 * more as a named module on this build's Java (5.x ships a module-info), where the advice inlined into module okhttp3
 * must still reach the agent.
 */
class OkHttpIT extends AbstractHttpClientIT {
  private static final String CLASS_PATH = "class path";
  private static final String MODULE_PATH = "module path";

  @Override
  protected String lock() {
    return "ok";
  }

  /** Every OkHttp version of testing/library-versions ({@code okhttp-<version>}), oldest first. */
  @Override
  protected List<Run> runs() {
    List<String> versions = AgentProcesses.libraryVersions("okhttp");
    List<Path> homes = AgentProcesses.javaHomes();
    List<Run> runs = new ArrayList<>();
    String newest = versions.get(versions.size() - 1);
    for (String v : versions.subList(0, versions.size() - 1)) {
      runs.add(new Run(homes.get(0), v, CLASS_PATH));
    }
    runs.add(new Run(homes.get(homes.size() - 1), newest, CLASS_PATH));
    runs.add(new Run(homes.get(0), newest, MODULE_PATH));
    return runs;
  }

  /** The OkHttp app on the run's jars, on the class path or as modules resolved from the module path. */
  @Override
  protected AgentJvm start(Run run, String agentArgs) {
    boolean modules = run.variant().equals(MODULE_PATH);
    AgentJvm.Builder builder = AgentJvm.builder().javaHome(run.javaHome())
        .name("okhttp-" + run.version() + "-java" + AgentProcesses.javaVersion(run.javaHome())
            + (modules ? "-modules" : ""))
        .agentArgs(agentArgs).mainClass(OkHttpApp.class.getName());
    if (modules) {
      builder.jvmArg("--module-path").jvmArg(okHttpClasspath(run.version())).jvmArg("--add-modules").jvmArg("okhttp3")
          .classpath(AgentProcesses.appClasspath());
    } else {
      builder.classpath(AgentProcesses.appClasspath() + File.pathSeparator + okHttpClasspath(run.version()));
    }
    AgentJvm app = builder.start();
    assertThat(app.awaitOutput("APP STARTED", Duration.ofSeconds(20)))
        .contains("OkHttp module: " + (modules ? "okhttp3" : "null"));
    return app;
  }

  @Override
  protected List<String> modes(Run run) {
    return List.of("SYNC", "ASYNC");
  }

  @Override
  protected String answered(String mode, int status) {
    // The caller's request object is never changed by the agent: only the app's own header.
    return "STATUS " + status + " callerHeaders=[X-App]";
  }

  /** The interceptors' headers: every request passed through both kinds of chain, next to the pair. */
  @Override
  protected List<String> alsoRecorded() {
    return List.of("X-Interceptor", "X-Network");
  }

  /** A POST's 303, the redirect every OkHttp follows for a POST (4.0 does not follow a POST's 307), as a GET. */
  @Override
  protected List<Redirect> redirects(Run run) {
    return List.of(new Redirect("SYNC", "POST", "/see-other", "GET"), new Redirect("ASYNC", "POST", "/see-other", "GET"));
  }

  @Override
  protected List<Case> whileHolding(Run run) {
    return List.of(new Case("a request OkHttp retries after a 408 carries the pair once per attempt", s -> {
      s.send("ASYNC", "PATCH", s.open, "/timed-out/patch", answered("ASYNC", 200),
          s.tagged("PATCH", "/timed-out/patch"), s.tagged("PATCH", "/timed-out/patch"));
      s.countTagged("PATCH", false);
      s.countTagged("PATCH", false);
    }));
  }

  /** OkHttp {@code version} with its run-time dependencies, as testing/library-versions resolved them. */
  private static String okHttpClasspath(String version) {
    Path dir = AgentProcesses.libraryJars("okhttp", version);
    try (Stream<Path> jars = Files.list(dir)) {
      String cp = jars.filter(p -> p.toString().endsWith(".jar")).sorted().map(Path::toString)
          .collect(Collectors.joining(File.pathSeparator));
      if (cp.isEmpty()) {
        throw new IllegalStateException(dir + " has no jars: build testing/library-versions (mvn install)");
      }
      return cp;
    } catch (IOException e) {
      throw new UncheckedIOException(dir + " is missing: build testing/library-versions (mvn install)", e);
    }
  }
}
