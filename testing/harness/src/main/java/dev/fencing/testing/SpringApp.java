package dev.fencing.testing;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The replicated Spring Boot sample (sample-apps/spring-replicas) run as users run it: {@code java -jar} on its fat
 * jar, with or without a {@code -javaagent}, configured by {@code --key=value} arguments. {@link #start} returns once
 * Spring logged "Started ... in X seconds" and {@code GET /orders} answered 200, and keeps both times, so tests and
 * the spring benchmark read the same figures.
 */
public final class SpringApp implements AutoCloseable {
  private static final Pattern STARTED =
      Pattern.compile("Started \\S+ in ([0-9.]+) seconds(?: \\(process running for ([0-9.]+)\\))?");
  private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  private final AgentJvm jvm;
  private final int port;
  private final double startedInSeconds;
  private final long firstOkMillis;
  private final double runningForSeconds;

  private SpringApp(AgentJvm jvm, int port, double startedInSeconds, double runningForSeconds, long firstOkMillis) {
    this.jvm = jvm;
    this.port = port;
    this.startedInSeconds = startedInSeconds;
    this.runningForSeconds = runningForSeconds;
    this.firstOkMillis = firstOkMillis;
  }

  /** The fat jar: the system property {@code fencing.it.spring.jar} (set by the build), else the module's target. */
  public static Path fatJar() {
    String p = System.getProperty("fencing.it.spring.jar");
    Path jar = p != null ? Path.of(p)
        : Path.of("sample-apps/spring-replicas/target/fencing-sample-spring-replicas-0.1.0-SNAPSHOT.jar");
    if (!Files.isRegularFile(jar)) {
      throw new IllegalStateException("the Spring Boot sample's fat jar is missing: " + jar.toAbsolutePath()
          + "; build sample-apps/spring-replicas (mvn -pl sample-apps/spring-replicas package) or set "
          + "-Dfencing.it.spring.jar=<path>");
    }
    return jar;
  }

  /**
   * Starts a replica on a free port against {@code jdbcUrl}. {@code agentArgs} null: no agent. {@code extraJvmArgs}
   * go before {@code -jar} (another {@code -javaagent}, say).
   */
  public static SpringApp start(Path javaHome, String replica, String jdbcUrl, String user, String agentArgs,
      Duration timeout, String... extraJvmArgs) {
    return start(javaHome, null, replica, jdbcUrl, user, agentArgs, timeout, extraJvmArgs);
  }

  /** As above with an explicit agent jar ({@code null}: the system property {@code fencing.agent.jar}). */
  public static SpringApp start(Path javaHome, Path agentJar, String replica, String jdbcUrl, String user,
      String agentArgs, Duration timeout, String... extraJvmArgs) {
    int port = Ports.freePort();
    AgentJvm.Builder b = launcher(fatJar(), port, replica, jdbcUrl, user).javaHome(javaHome).name("spring-" + replica);
    for (String a : extraJvmArgs) {
      b.jvmArg(a);
    }
    if (agentJar != null) {
      b.agentJar(agentJar);
    }
    b = agentArgs == null ? b.noAgent() : b.agentArgs(agentArgs);
    long t0 = System.nanoTime();
    AgentJvm jvm = b.start();
    try {
      long okAt = awaitStarted(jvm, port, timeout);
      Matcher m = STARTED.matcher(jvm.output());
      boolean found = m.find();
      double started = found ? Double.parseDouble(m.group(1)) : Double.NaN;
      double runningFor = found && m.group(2) != null ? Double.parseDouble(m.group(2)) : Double.NaN;
      return new SpringApp(jvm, port, started, runningFor, (okAt - t0) / 1_000_000);
    } catch (RuntimeException | AssertionError e) {
      jvm.close();
      throw e;
    }
  }

  /**
   * The launch of one replica as users run it ({@code java -jar jar --server.port=... --app.replica=...
   * --spring.datasource.*}), for callers that start it themselves (the demo registers the JVM before it waits):
   * add the agent and JVM options, {@link AgentJvm.Builder#start()}, then {@link #awaitStarted}.
   */
  public static AgentJvm.Builder launcher(Path jar, int port, String replica, String jdbcUrl, String user) {
    return AgentJvm.builder().executableJar(jar)
        .args("--server.port=" + port, "--app.replica=" + replica, "--spring.datasource.url=" + jdbcUrl,
            "--spring.datasource.username=" + user);
  }

  /**
   * Waits for Spring's "Started ..." line and then the first 200 of {@code GET /orders} on {@code port}, both within
   * {@code timeout} of the call; returns the {@link System#nanoTime()} of that 200. Throws {@link AssertionError}
   * with the JVM's output when either does not come (or the JVM exits).
   */
  public static long awaitStarted(AgentJvm jvm, int port, Duration timeout) {
    long t0 = System.nanoTime();
    jvm.awaitOutput("Started SpringReplicasApplication in", timeout);
    return awaitOk(jvm, port, timeout.minusNanos(System.nanoTime() - t0));
  }

  private static long awaitOk(AgentJvm jvm, int port, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    String last = "no answer";
    while (System.nanoTime() < deadline) {
      if (!jvm.isAlive()) {
        throw new AssertionError(jvm + " exited before GET /orders answered 200:\n" + jvm.output());
      }
      try {
        HttpResponse<String> r = send(port, "GET", "/orders", null);
        if (r.statusCode() == 200) {
          return System.nanoTime();
        }
        last = r.statusCode() + " " + r.body();
      } catch (RuntimeException e) {
        last = e.toString();
      }
      Processes.sleep(20);
    }
    throw new AssertionError("GET /orders on " + jvm + " did not answer 200 within " + timeout + "; last: " + last
        + "\n" + jvm.output());
  }

  /** Spring's own "Started ... in X seconds". */
  public double startedInSeconds() {
    return startedInSeconds;
  }

  /**
   * The JVM's life before Spring's own clock started: "process running for" minus "started in" of the same line
   * (JVM start, premain, the launcher opening the nested jars); NaN when Spring did not print it.
   */
  public double launchMillis() {
    return (runningForSeconds - startedInSeconds) * 1000;
  }

  /** From launching the JVM to the first 200 of {@code GET /orders}. */
  public long firstOkMillis() {
    return firstOkMillis;
  }

  public int port() {
    return port;
  }

  public AgentJvm jvm() {
    return jvm;
  }

  /** {@code GET path}: status and body. */
  public HttpResponse<String> get(String path) {
    return send(port, "GET", path, null);
  }

  /** {@code POST path} with a JSON body: status and body. */
  public HttpResponse<String> postJson(String path, String json) {
    return send(port, "POST", path, json);
  }

  /** {@code method path} on the replica at {@code port}, with a JSON body or none: status and body. */
  public static HttpResponse<String> send(int port, String method, String path, String json) {
    HttpRequest.Builder r = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(10));
    if (json != null) {
      r.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(json));
    } else {
      r.method(method, HttpRequest.BodyPublishers.noBody());
    }
    try {
      return CLIENT.send(r.build(), HttpResponse.BodyHandlers.ofString());
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(method + " " + path + " on port " + port + " failed", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  @Override
  public void close() {
    jvm.close();
  }
}
