package dev.fencing.demo;

import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import dev.fencing.testing.SpringApp;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One replica of the Spring Boot sample (sample-apps/spring-replicas), launched as users run it: {@code java -jar}
 * on its fat jar with the agent on the command line, configured by one declared section and no JVM-wide lock. Its
 * settlement job reads, works for {@link #JOB_WORK}, then writes, so that a freeze lands inside a run, as a GC pause
 * would.
 */
final class Replica {
  static final String LOCK = "settlement";
  static final String SECTION = "dev.fencing.sample.spring.SettlementJob#settle";
  static final String TTL = "3s";
  static final Duration JOB_WORK = Duration.ofMillis(2000);
  private static final Duration START_TIMEOUT = Duration.ofSeconds(120);
  /** Small, quick-starting JVMs: the machine may have two cores for everything. */
  private static final String[] JVM_OPTIONS = {"-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
      "-Dapp.settlement.work-ms=" + JOB_WORK.toMillis(), "-Dapp.settlement.interval-ms=100"};

  /** The settlement lock's entry in the agent's {@code /status} ({@code locks[]}). */
  record Lock(String state, long token) {
    boolean holding() {
      return state.equals("HOLDING");
    }

    @Override
    public String toString() {
      return state + (token > 0 ? ", token " + token : "");
    }
  }

  private static final Pattern LOCK_ENTRY = Pattern.compile("\"lock\":\"" + LOCK
      + "\",\"scope\":\"[^\"]*\",\"state\":\"(\\w+)\",\"token\":(\\d+)");

  final String name;
  final int port;
  final int statusPort;
  final AgentJvm jvm;

  private Replica(String name, int port, int statusPort, AgentJvm jvm) {
    this.name = name;
    this.port = port;
    this.statusPort = statusPort;
    this.jvm = jvm;
  }

  /** Launches the replica (registered with {@code resources} at once, so Ctrl-C stops it while it starts). */
  static Replica launch(DemoOptions options, String name, String jdbcUrl, String user, String etcdEndpoints,
      Resources resources) {
    int port = Ports.freePort();
    int statusPort = Ports.freePort();
    AgentJvm.Builder b = SpringApp.launcher(options.springJar(), port, name, jdbcUrl, user)
        .agentJar(options.agentJar())
        .agentArgs("sections=" + SECTION + "@" + LOCK + ",etcd.endpoints=" + etcdEndpoints + ",lease.ttl=" + TTL
            + ",lease.safety-margin=500ms,holder.id=" + name + ",http.port=" + statusPort)
        .name(name);
    for (String option : JVM_OPTIONS) {
      b.jvmArg(option);
    }
    return new Replica(name, port, statusPort, resources.add(b.start()));
  }

  /** Waits for Spring's "Started ..." line and the first 200 of {@code GET /orders}. */
  void awaitStarted() {
    try {
      SpringApp.awaitStarted(jvm, port, START_TIMEOUT);
    } catch (RuntimeException | AssertionError e) {
      String first = String.valueOf(e.getMessage()).lines().findFirst().orElse("");
      throw new StoryBroken(name + " did not start: " + first + "; see " + jvm.logFile());
    }
  }

  /** The settlement lock as this replica's agent reports it; null while its endpoint is not up. */
  Lock lock() {
    String body;
    try {
      body = Http.get("http://127.0.0.1:" + statusPort + "/status");
    } catch (RuntimeException e) {
      return null;
    }
    Matcher m = LOCK_ENTRY.matcher(body);
    return m.find() ? new Lock(m.group(1), Long.parseLong(m.group(2))) : null;
  }

  Lock awaitLock(String state, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    Lock last = null;
    while (System.nanoTime() < deadline) {
      Lock l = lock();
      if (l != null) {
        last = l;
        if (l.state().equals(state)) {
          return l;
        }
      }
      if (!jvm.isAlive()) {
        throw new StoryBroken(name + " exited; see " + jvm.logFile());
      }
      Story.pause(50);
    }
    throw new StoryBroken(name + "'s lock '" + LOCK + "' did not reach " + state + " within " + timeout.toSeconds()
        + " s" + (last == null ? " (its status endpoint never answered)" : "; last: " + last));
  }

  /** The lock's state as soon as the agent answers (just after a resume). */
  Lock awaitLockAnswer() {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (System.nanoTime() < deadline) {
      Lock l = lock();
      if (l != null) {
        return l;
      }
      Story.pause(10);
    }
    throw new StoryBroken(name + "'s status endpoint did not answer within 10 s; see " + jvm.logFile());
  }

  String metrics() {
    return Http.get("http://127.0.0.1:" + statusPort + "/metrics");
  }

  HttpResponse<String> post(String path, String json) {
    return send("POST", path, json);
  }

  private HttpResponse<String> send(String method, String path, String json) {
    try {
      return SpringApp.send(port, method, path, json);
    } catch (IllegalStateException interrupted) {
      throw new StoryBroken("interrupted");
    }
  }

  @Override
  public String toString() {
    return name;
  }
}
