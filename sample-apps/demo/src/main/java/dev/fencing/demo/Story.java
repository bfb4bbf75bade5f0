package dev.fencing.demo;

import dev.fencing.testing.AgentJvm;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;

/**
 * Runs the split-brain story and gathers its {@link Facts}: everything is started, worker-a takes the lock, is frozen
 * (SIGSTOP) past its lease, worker-b takes over with a higher token, worker-a is resumed in the middle of its loop
 * and goes on making side effects for a while, then both are drained. What the story means is decided elsewhere
 * ({@link Timeline}, {@link EndStateChecks}); this class only makes it happen and narrates.
 */
final class Story {
  /** How long worker-a works alone before it is frozen. */
  private static final Duration HOLDER_WORKS = Duration.ofSeconds(2);
  /** Shortest freeze: well past the 3 s TTL, so the takeover happens while worker-a is frozen. */
  private static final Duration MIN_FREEZE = Duration.ofSeconds(5);
  /** How long worker-b works with its token before worker-a wakes up. */
  private static final Duration SUCCESSOR_WORKS = Duration.ofMillis(1500);
  /** How long the resumed worker-a goes on attempting side effects. */
  private static final Duration STALE_WINDOW = Duration.ofMillis(1500);

  private final DemoOptions options;
  private final Console console;
  private final Resources resources;
  private Apps apps;
  private PrometheusRun prometheus;

  Story(DemoOptions options, Console console, Resources resources) {
    this.options = options;
    this.console = console;
    this.resources = resources;
  }

  /** The JVMs started so far (for log paths when something fails). */
  List<AgentJvm> jvms() {
    return apps == null ? List.of() : apps.started();
  }

  PrometheusRun prometheus() {
    return prometheus;
  }

  Facts run() {
    console.heading("Setting up (everything on 127.0.0.1, on free ports; all of it is stopped at the end)");
    console.say("Starting etcd, PostgreSQL 15 and a Kafka broker (KRaft, in its own JVM) ...");
    Infrastructure infra = Infrastructure.start(resources);
    console.say("etcd at " + infra.etcd.endpoints() + ", PostgreSQL on port " + infra.postgres.port() + ", Kafka at "
        + infra.kafka.bootstrapServers() + ".");
    infra.prepare();
    console.say("Databases 'bank' and 'inventory' created; the operator installed the SQL fences for lock '"
        + Infrastructure.LOCK + "':");
    console.line("          bank.account        table mode: a write with a token below the fence's fails (FN001)");
    console.line("          bank.ledger_entry   per-row mode: every entry keeps the token it was written with");
    console.line("          bank.outbox         a tokened outbox (sql install --outbox): an insert with a stale token"
        + " fails like a write to bank.account");
    console.line("          inventory.stock, inventory.reservation   the same two modes in the service's database");
    WebhookReceiver webhook = resources.add(WebhookReceiver.start());
    apps = new Apps(options, infra, resources);
    apps.startService();
    console.say("inventory-service is up on port " + apps.servicePort + ": the HTTP fence guards POST /reservations;"
        + " its agent holds no lease and carries each request's token into the service's own database writes.");
    AgentJvm consumer = apps.startConsumer();
    console.say("audit-consumer reads topic '" + Infrastructure.TOPIC + "' behind the Kafka consumer fence"
        + " (enabled by consumer properties only).");
    console.say("A webhook receiver on port " + webhook.port() + " stands for a third party: it checks no token, and"
        + " the workers' agents are not told it is fenced.");
    apps.startRelay();
    console.say("The outbox relay runs on its own (java -jar fencing-agent.jar outbox relay, no agent): it delivers"
        + " each committed row of bank.outbox to the webhook receiver's " + WebhookReceiver.OUTBOX_PATH + ", with the"
        + " row's token and an Idempotency-Key, by which the receiver applies each event once.");

    console.heading("The story");
    console.say("Starting the same unmodified ledger-worker app twice, worker-a then worker-b, with the agent attached:"
        + " lock '" + Infrastructure.LOCK + "', lease TTL " + Apps.TTL + (options.observe()
            ? ", mode=observe (block nothing, count what would be blocked)." : "."));
    Apps.Worker a = apps.startWorker(Facts.WORKER_A, webhook.port());
    Apps.Status holding = awaitHolding(a, Duration.ofSeconds(30));
    long tokenA = holding.token();
    long aHoldingAt = System.currentTimeMillis();
    console.say("worker-a holds the lock with fencing token " + tokenA + " and starts booking transfers.");
    Apps.Worker b = apps.startWorker(Facts.WORKER_B, webhook.port());
    awaitState(b, "STANDBY", Duration.ofSeconds(30));
    console.say("worker-b runs the same loop but waits for the lock (STANDBY): " + (options.observe()
            ? "observe mode lets its side effects out without a token, and the fences refuse them."
            : "its agent blocks every side effect it attempts."));
    if (options.prometheus()) {
      prometheus = resources.add(PrometheusRun.start(options, a, b, apps, console));
    }
    pause(HOLDER_WORKS.toMillis());
    MetricsSnapshot before = scrape(a, b);
    console.say("worker-a has booked " + countOk(a, SideEffect.JDBC, 0) + " transfers; each is one PostgreSQL"
        + " transaction (which also writes a webhook notification into bank.outbox), one POST to the inventory"
        + " service, one Kafka event and one direct webhook call.");

    long freezeAt = System.currentTimeMillis();
    a.jvm().suspend();
    console.say("worker-a freezes (SIGSTOP), as in a long GC pause: it cannot renew its lease, nor notice that it is"
        + " running out.");
    Apps.Status takeover = awaitHolding(b, Duration.ofSeconds(15));
    long takeoverAt = System.currentTimeMillis();
    long tokenB = takeover.token();
    if (tokenB <= tokenA) {
      throw new StoryBroken("worker-b took over with token " + tokenB + ", not above worker-a's " + tokenA);
    }
    console.say(String.format(Locale.ROOT, "%.1f s into the freeze, etcd expired worker-a's lease and worker-b took"
        + " over with token %d (higher than %d).", (takeoverAt - freezeAt) / 1000.0, tokenB, tokenA));
    if (awaitFirstTransfer(b, takeoverAt)) {
      pause(Math.max(SUCCESSOR_WORKS.toMillis(), freezeAt + MIN_FREEZE.toMillis() - System.currentTimeMillis()));
      console.say("worker-b works with token " + tokenB + ": " + countOk(b, SideEffect.JDBC, takeoverAt)
          + " transfers booked so far. worker-a, still frozen, has not run a single instruction since.");
    } else {
      // worker-a was frozen inside a transaction that had already passed the fence: the fence makes the new token
      // wait until that transaction ends, so that the two holders' writes never interleave.
      SideEffect failed = SideEffect.parse(b.name(), b.jvm().output()).stream()
          .filter(e -> e.is(SideEffect.JDBC) && e.at() >= takeoverAt).findFirst().orElse(null);
      if (failed != null) {
        throw new StoryBroken("worker-b holds the lock but its transfers fail: " + failed.outcome());
      }
      console.say("worker-b's first transfer waits: worker-a was frozen inside a transaction that had passed the"
          + " fence, and the fence lets a new token in only after the old token's open transactions end.");
    }

    // Stamped before the signal: the JVM runs as soon as it arrives, before the signalling process has even exited,
    // and a side effect it reports then is one of the resumed worker's (a stamp after it would miss it).
    long resumeAt = System.currentTimeMillis();
    a.jvm().resume();
    Apps.Status woke = a.status();
    long knewWithin = System.currentTimeMillis() - resumeAt;
    console.say("worker-a resumes (SIGCONT) in the middle of its loop, believing it still holds the lock. Its agent"
        + " knows better: /status says " + woke.state() + " " + knewWithin + " ms later.");
    pause(STALE_WINDOW.toMillis());
    console.say("Draining both workers (each finishes its current transfer and stops) ...");
    a.drain();
    b.drain();
    long drainedAt = System.currentTimeMillis();
    Apps.Status finalA = a.status();
    Apps.Status finalB = b.status();
    awaitConsumerCaughtUp(infra, consumer);
    awaitOutboxDelivered(infra);
    MetricsSnapshot after = scrape(a, b);
    if (prometheus != null) {
      prometheus.awaitStaleWriteAlerts();
    }

    return new Facts(options.observe(), tokenA, tokenB, aHoldingAt, freezeAt, takeoverAt, resumeAt, drainedAt, woke,
        knewWithin, finalA, finalB, SideEffect.parse(a.name(), a.jvm().output()),
        SideEffect.parse(b.name(), b.jvm().output()), Consumed.parse(consumer.output()), webhook.calls(),
        webhook.deliveries(), DatabaseState.read(infra), before, after);
  }

  private MetricsSnapshot scrape(Apps.Worker a, Apps.Worker b) {
    return MetricsSnapshot.scrape(List.of(
        new MetricsSnapshot.Source(a.name(), a::metrics),
        new MetricsSnapshot.Source(b.name(), b::metrics),
        MetricsSnapshot.http("inventory-service agent", "http://127.0.0.1:" + apps.serviceAgentPort + "/metrics"),
        MetricsSnapshot.http("inventory-service HTTP fence", "http://127.0.0.1:" + apps.servicePort
            + "/fence-metrics"),
        MetricsSnapshot.http("audit-consumer Kafka fence", "http://127.0.0.1:" + apps.consumerMetricsPort
            + "/metrics"),
        MetricsSnapshot.http("outbox relay", "http://127.0.0.1:" + apps.relayMetricsPort + "/metrics")));
  }

  private static Apps.Status awaitHolding(Apps.Worker w, Duration timeout) {
    return awaitState(w, "HOLDING", timeout);
  }

  private static Apps.Status awaitState(Apps.Worker w, String state, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    Apps.Status last = null;
    while (System.nanoTime() < deadline) {
      Apps.Status s = w.tryStatus();
      if (s != null) {
        last = s;
        if (s.state().equals(state)) {
          return s;
        }
      }
      pause(50);
    }
    throw new StoryBroken(w.name() + " did not reach " + state + " within " + timeout.toSeconds() + " s"
        + (last == null ? " (its status endpoint never answered)" : "; its last status: " + last.json()));
  }

  /**
   * Waits a few seconds for the successor's first committed transfer (its first write advances the fences to its
   * token); false if it is still waiting for a transaction the frozen worker left open.
   */
  private static boolean awaitFirstTransfer(Apps.Worker b, long since) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(4);
    while (countOk(b, SideEffect.JDBC, since) == 0) {
      if (System.nanoTime() > deadline) {
        return false;
      }
      pause(50);
    }
    return true;
  }

  /** The consumer has read (or dropped) every record on the topic. */
  private static void awaitConsumerCaughtUp(Infrastructure infra, AgentJvm consumer) {
    TopicPartition tp = new TopicPartition(Infrastructure.TOPIC, 0);
    long end;
    try {
      end = infra.kafka.admin().listOffsets(java.util.Map.of(tp, OffsetSpec.latest())).partitionResult(tp)
          .get(10, TimeUnit.SECONDS).offset();
    } catch (Exception e) {
      throw new StoryBroken("cannot read the end offset of " + tp + ": " + e, e);
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (Consumed.lastPosition(consumer.output()) < end) {
      if (System.nanoTime() > deadline) {
        throw new StoryBroken("audit-consumer did not reach the end of " + tp + " (offset " + end + ") within 20 s;"
            + " see " + consumer.logFile());
      }
      pause(100);
    }
  }

  /** The relay has delivered every event of the outbox (the workers are drained: no new ones come). */
  private static void awaitOutboxDelivered(Infrastructure infra) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    long left = -1;
    while (System.nanoTime() < deadline) {
      try (java.sql.Connection c = java.sql.DriverManager.getConnection(infra.bankUrl());
          java.sql.Statement s = c.createStatement();
          java.sql.ResultSet rs = s.executeQuery("SELECT count(*) FROM " + Infrastructure.OUTBOX
              + " WHERE state <> 'delivered'")) {
        rs.next();
        left = rs.getLong(1);
      } catch (java.sql.SQLException e) {
        throw new StoryBroken("cannot read the outbox: " + e.getMessage(), e);
      }
      if (left == 0) {
        return;
      }
      pause(100);
    }
    throw new StoryBroken("the outbox relay did not deliver every event within 20 s (" + left + " left); see the"
        + " outbox-relay log");
  }

  private static int countOk(Apps.Worker w, String channel, long since) {
    return (int) SideEffect.parse(w.name(), w.jvm().output()).stream()
        .filter(e -> e.is(channel) && e.at() >= since && e.ok()).count();
  }

  static void pause(long millis) {
    if (millis <= 0) {
      return;
    }
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StoryBroken("interrupted");
    }
  }
}
