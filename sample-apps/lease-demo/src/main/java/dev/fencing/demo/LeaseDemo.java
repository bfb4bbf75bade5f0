package dev.fencing.demo;

import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Tells the split-brain story with real components, so that a newcomer sees what the agent does before reading any
 * code: a real etcd, two unmodified {@link Worker} JVMs with the agent attached, the holder frozen past its lease
 * (SIGSTOP, as in a long GC pause), the other taking over with a higher token, and the old holder waking up knowing it
 * has lost. Exits 0 when the story held and 1 with the reason when it did not, so it can also serve as a check.
 */
public final class LeaseDemo {
  private static final String LOCK = "ledger";
  private static final String TTL = "3s";
  private static final String SAFETY_MARGIN = "500ms";
  private static final Duration PAUSE = Duration.ofSeconds(6);
  private static final Duration START_TIMEOUT = Duration.ofSeconds(30);
  private static final Duration RESUME_WATCH = Duration.ofSeconds(1);

  private final long startNanos = System.nanoTime();
  private final List<AgentJvm> started = new ArrayList<>();

  private LeaseDemo() {}

  public static void main(String[] args) {
    LeaseDemo demo = new LeaseDemo();
    int code;
    try {
      demo.run();
      code = 0;
    } catch (RuntimeException | AssertionError e) {
      System.out.println();
      System.out.println("The demo FAILED: " + (e instanceof StoryBroken ? e.getMessage() : e.toString()));
      for (AgentJvm jvm : demo.started) {
        System.out.println("  log of " + jvm.logFile().getFileName() + ": " + jvm.logFile());
      }
      code = 1;
    }
    System.out.printf(Locale.ROOT, "Finished in %.1f s, exit code %d.%n", demo.elapsedSeconds(), code);
    System.exit(code);
  }

  private void run() {
    Path agentJar = Path.of(System.getProperty("fencing.agent.jar", "agent/jar/target/fencing-agent.jar"));
    if (!Files.isRegularFile(agentJar)) {
      throw new StoryBroken("no agent jar at " + agentJar.toAbsolutePath()
          + ": build it (mvn -B -q install -DskipTests) or pass -Dfencing.agent.jar=<path>");
    }

    say("Starting a real etcd server (one node) on a free loopback port.");
    try (EtcdCluster etcd = EtcdCluster.single()) {
      // Agent arguments are separated by commas; etcd.endpoints also accepts semicolons between URLs.
      String endpoints = etcd.endpoints().replace(',', ';');
      say("etcd is up at " + endpoints + ".");

      int[] ports = Ports.freePorts(2);
      say("Starting the same unmodified Worker app twice, as worker-a and worker-b, each with the agent attached.");
      say("Both campaign for lock '" + LOCK + "' with a " + TTL + " lease and a " + SAFETY_MARGIN + " safety margin.");
      try (AgentJvm jvmA = startWorker(agentJar, "worker-a", ports[0], endpoints);
          AgentJvm jvmB = startWorker(agentJar, "worker-b", ports[1], endpoints)) {
        Node a = new Node("worker-a", ports[0], jvmA);
        Node b = new Node("worker-b", ports[1], jvmB);
        tell(a, b, endpoints, agentJar);
      }
    }
  }

  private void tell(Node a, Node b, String endpoints, Path agentJar) {
    Node holder = awaitOneHolder(a, b);
    Node other = holder == a ? b : a;
    Status before = holder.status();
    long oldToken = before.token();
    if (oldToken <= 0) {
      throw new StoryBroken(holder.name + " holds the lock without a positive token: " + before.json());
    }
    say(holder.name + " holds the lock with fencing token " + oldToken + " (" + before.leaseRemainingMs()
        + " ms of lease left); " + other.name + " waits in " + other.status().state() + ".");

    say("Asking the agent's doctor command, from a third JVM, who holds the lock:");
    runDoctor(agentJar, endpoints, holder, oldToken);

    say("Now " + holder.name + " freezes for " + PAUSE.toSeconds() + " s (SIGSTOP), as in a long GC pause.");
    say("Frozen, it cannot renew its lease, and it cannot notice that it is running out.");
    long pausedAt = System.nanoTime();
    holder.jvm.suspend();
    Status takeover = awaitHolding(other, pausedAt + PAUSE.toNanos());
    long takeoverMs = (System.nanoTime() - pausedAt) / 1_000_000;
    if (takeover.token() <= oldToken) {
      throw new StoryBroken(other.name + " took over with token " + takeover.token() + ", not above " + oldToken);
    }
    say(seconds(takeoverMs) + " s into the pause, etcd expired " + holder.name + "'s lease and " + other.name
        + " took over with token " + takeover.token() + ", higher than " + oldToken + ".");
    say(holder.name + " still believes nothing happened: it has not run a single instruction since.");
    sleepUntil(pausedAt + PAUSE.toNanos());

    holder.jvm.resume();
    long resumedAt = System.nanoTime();
    Status woke = holder.status();
    long wokeMs = (System.nanoTime() - resumedAt) / 1_000_000;
    if (woke.state().equals("HOLDING")) {
      throw new StoryBroken(holder.name + " still says HOLDING after waking up: " + woke.json());
    }
    say(holder.name + " wakes up. " + wokeMs + " ms later its /status says " + woke.state() + ", not HOLDING.");
    String reason = woke.lastLossReason() != null ? woke.lastLossReason() : awaitLossReason(holder);
    say("It keeps its old token " + woke.token() + " and records why it lost the lease: " + reason + ".");
    say("So it knows it must not write: its local deadline ran out before etcd could give the lock away.");

    watchOneHolder(holder, other, takeover.token());
    say("For " + RESUME_WATCH.toMillis() + " ms after waking, " + other.name + " alone held the lock.");

    Status finalA = a.status();
    Status finalB = b.status();
    System.out.println();
    System.out.println("  worker    state     token");
    System.out.printf(Locale.ROOT, "  %-9s %-9s %d%n", a.name, finalA.state(), finalA.token());
    System.out.printf(Locale.ROOT, "  %-9s %-9s %d%n", b.name, finalB.state(), finalB.token());
    System.out.println();
    say("With this token the agent tags every JDBC write and HTTP request (JDK HttpClient, HttpURLConnection), and"
        + " blocks them once the lease is EXPIRED; the SQL and HTTP fences reject stale tokens. Kafka comes next.");
    say("The story held: one holder at a time, a higher token after the takeover, and the old holder knew it had lost.");
  }

  private AgentJvm startWorker(Path agentJar, String name, int port, String endpoints) {
    AgentJvm jvm = AgentJvm.builder()
        .agentJar(agentJar)
        .agentArgs("lock=" + LOCK + ",etcd.endpoints=" + endpoints + ",http.port=" + port + ",lease.ttl=" + TTL
            + ",lease.safety-margin=" + SAFETY_MARGIN + ",holder.id=" + name)
        .classpath(workerClasspath())
        .mainClass(Worker.class.getName())
        .args(name)
        .name(name)
        .start();
    started.add(jvm);
    return jvm;
  }

  /** Only the directory (or jar) holding {@link Worker}: the app gets nothing of the demo's harness. */
  private static String workerClasspath() {
    try {
      return Path.of(Worker.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    } catch (URISyntaxException e) {
      throw new IllegalStateException("cannot locate the Worker classes", e);
    }
  }

  private Node awaitOneHolder(Node a, Node b) {
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    String last = "";
    while (System.nanoTime() < deadline) {
      Status sa = a.tryStatus();
      Status sb = b.tryStatus();
      if (sa != null && sb != null) {
        if (sa.holding() && sb.holding()) {
          throw new StoryBroken("both workers say HOLDING: " + sa.json() + " " + sb.json());
        }
        if (sa.holding() && sb.state().equals("STANDBY")) {
          return a;
        }
        if (sb.holding() && sa.state().equals("STANDBY")) {
          return b;
        }
        last = a.name + " " + sa.state() + ", " + b.name + " " + sb.state();
      }
      pause(100);
    }
    throw new StoryBroken("no single holder with the other in STANDBY within " + START_TIMEOUT.toSeconds() + " s"
        + (last.isEmpty() ? " (status endpoints never answered)" : "; last seen: " + last));
  }

  private void runDoctor(Path agentJar, String endpoints, Node holder, long token) {
    try (AgentJvm doctor = AgentJvm.builder()
        .noAgent()
        .executableJar(agentJar)
        .args("doctor", "lock=" + LOCK, "etcd.endpoints=" + endpoints, "lease.ttl=3s", "lease.safety-margin=500ms")
        .name("doctor")
        .start()) {
      started.add(doctor);
      int exit = doctor.awaitExit(Duration.ofSeconds(30));
      String output = doctor.output();
      for (String line : output.strip().split("\n")) {
        System.out.println("    | " + line);
      }
      String expected = "held by " + holder.name + " with fencing token " + token;
      if (exit != 0 || !output.contains(expected)) {
        throw new StoryBroken("doctor exited with " + exit + " and did not say \"" + expected + "\"");
      }
      say("The doctor agrees: " + holder.name + ", token " + token + ".");
    }
  }

  private Status awaitHolding(Node node, long deadlineNanos) {
    while (System.nanoTime() < deadlineNanos) {
      Status s = node.tryStatus();
      if (s != null && s.holding()) {
        return s;
      }
      pause(50);
    }
    throw new StoryBroken(node.name + " did not take over within " + PAUSE.toSeconds() + " s of the pause");
  }

  /** The loss reason is written by the agent's 20 ms deadline check, which may run just after the first read. */
  private static String awaitLossReason(Node node) {
    String body = Http.awaitStatus(node.port, "\"lastLossReason\":\"", Duration.ofSeconds(2));
    return Http.jsonField(body, "lastLossReason");
  }

  private static void watchOneHolder(Node old, Node current, long token) {
    long end = System.nanoTime() + RESUME_WATCH.toNanos();
    do {
      Status o = old.status();
      Status c = current.status();
      if (o.holding()) {
        throw new StoryBroken(old.name + " went back to HOLDING while " + current.name + " held the lock: " + o.json());
      }
      if (!c.holding() || c.token() != token) {
        throw new StoryBroken(current.name + " stopped holding token " + token + ": " + c.json());
      }
      pause(100);
    } while (System.nanoTime() < end);
  }

  private void say(String sentence) {
    System.out.printf(Locale.ROOT, "[%5.1fs] %s%n", elapsedSeconds(), sentence);
  }

  private double elapsedSeconds() {
    return (System.nanoTime() - startNanos) / 1e9;
  }

  private static String seconds(long millis) {
    return String.format(Locale.ROOT, "%.1f", millis / 1000.0);
  }

  private static void sleepUntil(long deadlineNanos) {
    long left = (deadlineNanos - System.nanoTime()) / 1_000_000;
    if (left > 0) {
      pause(left);
    }
  }

  private static void pause(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StoryBroken("interrupted");
    }
  }

  /** One worker JVM and the port of its agent's status endpoint. */
  private record Node(String name, int port, AgentJvm jvm) {
    Status status() {
      return Status.parse(Http.get("http://127.0.0.1:" + port + "/status"));
    }

    /** Null while the agent's endpoint is not up yet. */
    Status tryStatus() {
      try {
        return status();
      } catch (RuntimeException e) {
        return null;
      }
    }
  }

  /** The fields of GET /status the story is told with. */
  private record Status(String state, long token, long leaseRemainingMs, String lastLossReason, String json) {
    static Status parse(String json) {
      return new Status(Http.jsonField(json, "state"), Long.parseLong(Http.jsonField(json, "token")),
          Long.parseLong(Http.jsonField(json, "leaseRemainingMs")), Http.jsonField(json, "lastLossReason"), json);
    }

    boolean holding() {
      return state.equals("HOLDING");
    }
  }

  /** The story did not hold; the message says how. */
  private static final class StoryBroken extends RuntimeException {
    StoryBroken(String message) {
      super(message);
    }
  }
}
