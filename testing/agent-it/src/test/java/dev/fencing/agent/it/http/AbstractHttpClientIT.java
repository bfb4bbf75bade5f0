package dev.fencing.agent.it.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.AppStdin;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.EtcdNode;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.function.ThrowingConsumer;
import org.opentest4j.TestAbortedException;

/**
 * The contract every hooked HTTP client must keep, against real JDK HttpServers (one fenced, one not) and a real etcd,
 * in a forked application JVM with the agent jar per {@link Run}. A subclass says how to start its client's app, which
 * commands send a request ({@link #modes}) and what the app answers; it adds the cases only its client has.
 *
 * <p>The cases of a run share one application, in order: the lease cannot be had back once it expired, and a JVM per
 * case would cost a lease expiry each. First the cases while holding, then the etcd cluster is killed and the app's
 * local deadline awaited, then the cases after expiry, last the app's metrics against the tally the cases kept.
 */
public abstract class AbstractHttpClientIT {
  protected static final String BLOCKED_EXCEPTION = "dev.fencing.agent.bootstrap.FencingBlockedException";
  private static final Set<String> SAFE = Set.of("GET", "HEAD", "OPTIONS", "TRACE");

  /** One forked application: its JDK, the library version it runs (null: the JDK's or the app's own), a variant. */
  protected record Run(Path javaHome, String version, String variant) {
    protected Run(Path javaHome) {
      this(javaHome, null, null);
    }

    @Override
    public String toString() {
      return "Java " + AgentProcesses.javaVersion(javaHome) + (version == null ? "" : ", " + version)
          + (variant == null ? "" : ", " + variant);
    }
  }

  /** A case of one run: its name and what it does with the run's {@link Session}. */
  protected record Case(String name, ThrowingConsumer<Session> body) {}

  /** A redirect the app follows: {@code method} to {@code path} in {@code mode}, followed by {@code then} to /ok. */
  protected record Redirect(String mode, String method, String path, String then) {}

  // What a subclass says about its client.

  /** The lock the app's agent holds. */
  protected abstract String lock();

  /** The applications to fork: JDKs, library versions. */
  protected abstract List<Run> runs();

  /** Starts the app of {@code run} with {@code -javaagent:<agent jar>=<agentArgs>}; returns once it has started. */
  protected abstract AgentJvm start(Run run, String agentArgs) throws Exception;

  /** The ways the app of {@code run} sends a request: the command's words before "METHOD URL". */
  protected abstract List<String> modes(Run run);

  /** The app's answer to a request sent in {@code mode} that the server answered with {@code status}. */
  protected abstract String answered(String mode, int status);

  /** The app's answer to a request sent in {@code mode} that the agent blocked with {@code message}. */
  protected String blocked(String mode, String message) {
    return "ERR " + BLOCKED_EXCEPTION + ": " + message;
  }

  /** The unsafe methods every mode must tag while holding and block after expiry. */
  protected List<String> unsafeMethods() {
    return List.of("POST", "PUT", "DELETE", "PATCH");
  }

  /** Agent arguments of this client's app beyond lock, lease, status port, fenced service and etcd: ",key=value...". */
  protected String moreAgentArgs(Run run) {
    return "";
  }

  /** The redirects the app follows, every hop tagged; by default a POST's 307 in every mode. */
  protected List<Redirect> redirects(Run run) {
    return modes(run).stream().map(m -> new Redirect(m, "POST", "/redirect", "POST")).toList();
  }

  /** Headers the servers also record (an app's own, that must survive next to the pair), in record order. */
  protected List<String> alsoRecorded() {
    return List.of();
  }

  /** This client's own cases while holding, run after the contract's. */
  protected List<Case> whileHolding(Run run) {
    return List.of();
  }

  /** This client's own cases after expiry, run after the contract's. */
  protected List<Case> afterExpiry(Run run) {
    return List.of();
  }

  /** Every run, its cases in order, one application per run. */
  @TestFactory
  Stream<DynamicContainer> contract() {
    return runs().stream().map(run -> {
      Session session = new Session(run);
      List<Case> cases = new ArrayList<>();
      cases.add(new Case("holding: every unsafe and safe request in every mode carries the pair exactly once",
          this::everyRequestCarriesThePairOnce));
      cases.add(new Case("holding: every hop of a followed redirect carries the pair exactly once",
          this::everyRedirectHopCarriesThePairOnce));
      cases.addAll(whileHolding(run));
      cases.add(new Case("expired: unsafe requests to an unfenced host never leave the app, which gets the block",
          this::unsafeRequestsToAnUnfencedHostAreBlocked));
      cases.add(new Case("expired: safe requests still go out, untagged", this::safeRequestsGoOutUntagged));
      cases.add(new Case("expired: a fenced service gets the request with the last token; its 409 is counted",
          this::aFencedServiceGetsTheLastToken));
      cases.addAll(afterExpiry(run).stream()
          .map(c -> new Case("expired: " + c.name(), s -> c.body().accept(s.expire()))).toList());
      cases.add(new Case("metrics: every unsafe attempt was decided and counted once", this::everyAttemptCounted));
      Stream<DynamicTest> tests = cases.stream().map(c -> DynamicTest.dynamicTest(c.name(), () -> {
        try {
          c.body().accept(session.started());
        } catch (AssertionError e) {
          // Failsafe's reports name a dynamic test by its index only: the message says which run and case failed.
          throw new AssertionError(getClass().getSimpleName() + " on " + run + ", " + c.name() + ": " + e.getMessage(),
              e);
        }
      }));
      return DynamicContainer.dynamicContainer(run.toString(), tests.onClose(session::close));
    });
  }

  private void everyRequestCarriesThePairOnce(Session s) throws IOException {
    List<String> methods = new ArrayList<>(unsafeMethods());
    methods.add("GET");
    for (String mode : modes(s.run)) {
      for (String method : methods) {
        s.send(mode, method, s.open, "/ok", answered(mode, 200), s.tagged(method, "/ok"));
        s.countTagged(method, false);
      }
    }
  }

  private void everyRedirectHopCarriesThePairOnce(Session s) throws IOException {
    for (Redirect r : redirects(s.run)) {
      s.send(r.mode(), r.method(), s.open, r.path(), answered(r.mode(), 200), s.tagged(r.method(), r.path()),
          s.tagged(r.then(), "/ok"));
      s.countTagged(r.method(), false);
      s.countTagged(r.then(), false);
    }
  }

  private void unsafeRequestsToAnUnfencedHostAreBlocked(Session s) throws IOException {
    s.expire();
    for (String mode : modes(s.run)) {
      for (String method : unsafeMethods()) {
        s.send(mode, method, s.open, "/ok", blocked(mode, s.blockedMessage()));
        s.count(s.lock, false, "blocked");
      }
    }
  }

  private void safeRequestsGoOutUntagged(Session s) throws IOException {
    s.expire();
    for (String mode : modes(s.run)) {
      s.send(mode, "GET", s.open, "/ok", answered(mode, 200), s.untagged("GET", "/ok"));
    }
  }

  private void aFencedServiceGetsTheLastToken(Session s) throws IOException {
    s.expire();
    for (String mode : modes(s.run)) {
      s.send(mode, "POST", s.fenced, "/stale", answered(mode, 409), s.tagged("POST", "/stale"));
      s.countTagged("POST", true);
      s.countRejection("stale_token");
      // A fence holding this token for another grant (an etcd restored from a snapshot): 409 replayed-token.
      s.send(mode, "POST", s.fenced, "/replayed", answered(mode, 409), s.tagged("POST", "/replayed"));
      s.countTagged("POST", true);
      s.countRejection("replayed_token");
    }
  }

  private void everyAttemptCounted(Session s) {
    String metrics = s.metrics();
    s.counts.forEach((metric, n) -> assertThat(metrics).as(metric).contains(metric + " " + n + ".0"));
    // The /status inventory credits each fence's refusal to the destination that refused, under the lock the request
    // was tagged for, whichever thread read the answer.
    String status = Http.get("http://127.0.0.1:" + s.port + "/status");
    Map<String, Long> rejections = new LinkedHashMap<>();
    Matcher m = Pattern.compile("\\{\"lock\":\"([^\"]*)\",\"channel\":\"http\",\"destination\":\"([^\"]*)\""
        + "[^{}]*?\"rejections\":(\\d+)").matcher(status);
    while (m.find()) {
      if (Long.parseLong(m.group(3)) > 0) {
        rejections.put(m.group(1) + " at " + m.group(2), Long.parseLong(m.group(3)));
      }
    }
    assertThat(rejections).as("rejections per (lock, destination) in " + status).isEqualTo(s.credited == 0 ? Map.of()
        : Map.of(s.lock + " at " + s.fenced.base(), (long) s.credited));
    assertThat(s.app.output()).doesNotContain("could not instrument").doesNotContain("Exception in thread");
  }

  /**
   * One run's application and servers, started by its first case, closed after its last; and the tally of the
   * side effects and rejections its cases caused, which the app's metrics must show.
   */
  protected final class Session {
    public final Run run;
    public final String lock = lock();
    public int port;
    public EtcdCluster etcd;
    public RecordingServer open;
    public RecordingServer fenced;
    public AgentJvm app;
    public AppStdin stdin;
    /** The token of the lease the app held, the last one it has after expiry. */
    public String token;
    /** The lease id of that lease: every tagged request's Fencing-Grant. */
    public String grant;
    private final Map<String, Integer> counts = new LinkedHashMap<>();
    /** Rejections the inventory must show on the fenced destination under this run's lock. */
    private int credited;
    private Throwable failedToStart;
    private boolean expired;

    private Session(Run run) {
      this.run = run;
    }

    private Session started() throws Exception {
      if (failedToStart != null) {
        throw new TestAbortedException("the application did not start", failedToStart);
      }
      if (app == null) {
        try {
          port = Ports.freePort();
          etcd = EtcdCluster.single();
          open = new RecordingServer(alsoRecorded().toArray(String[]::new));
          fenced = new RecordingServer(alsoRecorded().toArray(String[]::new));
          app = start(run, "lock=" + lock + ",lease.ttl=3s,lease.safety-margin=500ms,http.port=" + port
              + ",fenced.http=127.0.0.1:" + fenced.port() + ",etcd.endpoints=" + etcd.endpoints()
              + moreAgentArgs(run));
          stdin = AppStdin.http(app);
          String status = Http.awaitStatus(port, "\"lock\":\"" + lock + "\",\"state\":\"HOLDING\"",
              Duration.ofSeconds(15));
          token = Http.jsonField(status, "token");
          grant = Http.jsonField(status, "leaseId").replace("\"", "");
          assertThat(grant).as("the lease id /status reports, lower-case hex").matches("[0-9a-f]{1,16}");
        } catch (Throwable e) {
          failedToStart = e;
          throw e;
        }
      }
      return this;
    }

    /** Kills the etcd cluster and waits for the app's lease to expire (its local deadline passed); once. */
    public Session expire() {
      if (!expired) {
        expired = true;
        for (EtcdNode n : etcd.nodes()) {
          n.kill();
        }
        Http.awaitStatus(port, "\"lock\":\"" + lock + "\",\"state\":\"EXPIRED\"", Duration.ofSeconds(10));
      }
      return this;
    }

    /** The block of a request under this run's lock after expiry, as FencingBlockedException says it. */
    public String blockedMessage() {
      return "Fencing Agent blocked a http side effect: lock '" + lock + "', token " + token
          + ": the lease expired (local deadline passed)";
    }

    /** The app's answer to one command. */
    public String run(String command) throws IOException {
      return stdin.run(command);
    }

    /**
     * Sends {@code method} to {@code server}'s {@code path} in {@code mode}; asserts the app's answer and what
     * reached the server, in order (nothing when none given), each tagged request with this lease's grant.
     */
    public void send(String mode, String method, RecordingServer server, String path, String answer,
        String... arrived) throws IOException {
      String command = mode + " " + method + " " + server.base() + path;
      assertThat(run(command)).as(command).isEqualTo(answer);
      arrived(server, command, arrived);
    }

    /** Asserts that exactly {@code lines} reached {@code server} since the last look, each grant right; forgets them. */
    public void arrived(RecordingServer server, String what, String... lines) {
      assertThat(server.received).as(what).containsExactly(lines);
      for (int i = 0; i < lines.length; i++) {
        if (lines[i].contains(" lock=[" + lock + "]")) {
          assertThat(server.grants.get(i)).as("Fencing-Grant of " + lines[i]).isEqualTo("[" + grant + "]");
        } else if (lines[i].contains(" lock=null")) {
          assertThat(server.grants.get(i)).as("Fencing-Grant of " + lines[i]).isEqualTo("null");
        }
      }
      server.received.clear();
      server.grants.clear();
    }

    /** A request as a server records it, with this run's pair. */
    public String tagged(String method, String path) {
      return tagged(method, path, token, lock);
    }

    /** A request as a server records it, with another lock's pair. */
    public String tagged(String method, String path, String token, String lock) {
      return method + " " + path + " token=[" + token + "] lock=[" + lock + "]" + alsoRecordedValues();
    }

    /** A request as a server records it, without a pair. */
    public String untagged(String method, String path) {
      return method + " " + path + " token=null lock=null" + alsoRecordedValues();
    }

    private String alsoRecordedValues() {
      StringBuilder s = new StringBuilder();
      alsoRecorded().forEach(name -> s.append(' ').append(name).append("=[1]"));
      return s.toString();
    }

    /** Tallies an attempt of {@code method} tagged under this run's lock, when it is unsafe. */
    public void countTagged(String method, boolean toFenced) {
      if (!SAFE.contains(method.toUpperCase(Locale.ROOT))) {
        count(lock, toFenced, "tagged");
      }
    }

    /** Tallies one side effect under {@code lock}. */
    public void count(String lock, boolean toFenced, String outcome) {
      counts.merge("fencing_side_effects_total{channel=\"http\",fenced=\"" + toFenced + "\",lock=\"" + lock
          + "\",outcome=\"" + outcome + "\"}", 1, Integer::sum);
    }

    /**
     * Tallies one rejection the fenced server answered to a request tagged under this run's lock (in the metrics, and
     * in the inventory on that destination).
     */
    public void countRejection(String reason) {
      countRejectionOfUntagged(reason);
      credited++;
    }

    /**
     * Tallies one rejection of a request that carried no pair: in the metrics only (no destination's entry is the
     * request's).
     */
    public void countRejectionOfUntagged(String reason) {
      counts.merge("fencing_rejections_total{channel=\"http\",lock=\"" + lock + "\",reason=\"" + reason + "\"}", 1,
          Integer::sum);
    }

    public String metrics() {
      return Http.get("http://127.0.0.1:" + port + "/metrics");
    }

    private void close() {
      for (AutoCloseable c : new AutoCloseable[] {app, fenced, open, etcd}) {
        try {
          if (c != null) {
            c.close();
          }
        } catch (Exception e) {
          // closing what is left of a run: the cases have reported
        }
      }
    }
  }
}
