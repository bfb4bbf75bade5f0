package dev.fencing.demo;

import dev.fencing.demo.DatabaseState.Row;
import dev.fencing.protocol.Rejection;
import dev.fencing.protocol.SqlStates;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * The claims the demo makes, each checked against what the databases, the consumer, the webhook and the metrics
 * say, independently of what the workers reported where possible. The story holds when every check passes.
 */
final class EndStateChecks {

  /** One claim, whether it held, and the evidence. */
  record Check(String claim, boolean ok, String evidence) {}

  private final Facts f;
  private final List<Check> checks = new ArrayList<>();

  private EndStateChecks(Facts facts) {
    this.f = facts;
  }

  static List<Check> run(Facts facts) {
    EndStateChecks c = new EndStateChecks(facts);
    c.holders();
    c.ledger();
    c.balances();
    c.inventory();
    c.consumer();
    c.webhook();
    c.outbox();
    c.staleAttempts();
    c.metrics();
    return c.checks;
  }

  private void check(String claim, boolean ok, String evidence) {
    checks.add(new Check(claim, ok, evidence));
  }

  private void holders() {
    check("worker-b took over with a higher token, and worker-a never held the lock again",
        f.tokenB() > f.tokenA() && !f.aWoke().holding() && !f.finalA().holding() && f.finalB().holding()
            && f.finalB().token() == f.tokenB(),
        "tokens " + f.tokenA() + " -> " + f.tokenB() + "; worker-a after resuming: " + f.aWoke().state()
            + ", at the end: " + f.finalA().state() + "; worker-b at the end: " + f.finalB().state() + " "
            + f.finalB().token());
  }

  private void ledger() {
    List<Row> rows = f.db().ledger();
    check("every ledger entry written after the takeover carries worker-b's token " + f.tokenB(),
        ordered(rows), tokenSummary(rows));
    check("every transfer a worker saw commit is in the ledger, and nothing else",
        sameTransfers(rows, f.a(), SideEffect.JDBC) && sameTransfers(rows, f.b(), SideEffect.JDBC),
        rows.size() + " entries; worker-a saw " + okCount(f.a(), SideEffect.JDBC) + " commits, worker-b "
            + okCount(f.b(), SideEffect.JDBC));
  }

  private void balances() {
    long total = f.db().balances().values().stream().mapToLong(Long::longValue).sum();
    long expected = Infrastructure.ACCOUNTS * Infrastructure.OPENING_BALANCE;
    boolean each = f.db().balances().entrySet().stream().allMatch(e -> e.getValue() == Infrastructure.OPENING_BALANCE
        + f.db().ledger().stream().mapToLong(r -> (r.to() == e.getKey() ? r.amount() : 0)
            - (r.from() == e.getKey() ? r.amount() : 0)).sum());
    check("balances add up: no money created or lost, each account matches its ledger entries",
        total == expected && each, "total " + total + " (expected " + expected + ") across "
            + f.db().balances().size() + " accounts; every balance = opening + credits - debits: " + each);
  }

  private void inventory() {
    List<Row> rows = f.db().reservations();
    long amounts = rows.stream().mapToLong(Row::amount).sum();
    check("every reservation made after the takeover carries worker-b's token; each 201 is one reservation",
        ordered(rows) && sameTransfers(rows, f.a(), SideEffect.INVENTORY)
            && sameTransfers(rows, f.b(), SideEffect.INVENTORY) && f.db().stockReserved() == amounts,
        tokenSummary(rows) + "; stock reserved " + f.db().stockReserved() + " = sum of reservations " + amounts);
  }

  private void consumer() {
    Set<String> sent = new TreeSet<>();
    for (SideEffect e : all()) {
      if (e.is(SideEffect.KAFKA) && e.ok()) {
        sent.add(e.worker() + "#" + e.transfer());
      }
    }
    boolean noPhantom = f.consumed().stream().allMatch(c -> sent.contains(c.worker() + "#" + c.transfer()));
    long staleConsumed = stale().stream().filter(e -> e.is(SideEffect.KAFKA))
        .filter(e -> f.consumed(e.worker(), e.transfer())).count();
    List<SideEffect> holdersMissing = new ArrayList<>();
    all().stream().filter(e -> e.is(SideEffect.KAFKA) && e.ok() && f.sentWhileHolding(e))
        .filter(e -> !f.consumed(e.worker(), e.transfer())).forEach(holdersMissing::add);
    boolean holdersConsumed = holdersMissing.isEmpty();
    int lastA = -1;
    int firstB = Integer.MAX_VALUE;
    for (int i = 0; i < f.consumed().size(); i++) {
      if (f.consumed().get(i).worker().equals(Facts.WORKER_A)) {
        lastA = i;
      } else {
        firstB = Math.min(firstB, i);
      }
    }
    boolean ordered = lastA < firstB;
    check("the audit consumer got every event of the lock holders, none of worker-a's after one of worker-b's, and"
            + " none that worker-a sent after resuming", noPhantom && staleConsumed == 0 && holdersConsumed && ordered,
        f.consumed().size() + " events consumed; stale events consumed: " + staleConsumed
            + "; every consumed event was sent: " + noPhantom + "; every holder's event consumed: " + holdersConsumed
            + (holdersConsumed ? "" : " (missing: " + holdersMissing.stream().map(e -> e.worker() + "#" + e.transfer()
                + " at " + e.at() + " " + e.outcome()).toList() + ", freeze at " + f.freezeAt() + ", takeover at "
                + f.takeoverAt() + ")")
            + "; worker-a's events all before worker-b's: " + ordered);
  }

  private void webhook() {
    SideEffect inFlight = f.inFlightAtFreeze();
    long inFlightCall = inFlight != null && inFlight.is(SideEffect.WEBHOOK)
        && Verdict.of(inFlight, f).kind() == Verdict.Kind.IN_FLIGHT ? inFlight.transfer() : -1;
    long fromA = f.webhookCalls().stream().filter(c -> c.worker().equals(Facts.WORKER_A)
        && c.receivedAt() >= f.resumeAt()).count();
    // The call in flight at the freeze is not a stale attempt: leave out that one call when it arrived after the
    // resume, and no more (a stale attempt of the same transfer is still one).
    boolean inFlightArrivedLate = inFlightCall >= 0 && f.webhookCalls().stream().noneMatch(c -> c.worker()
        .equals(Facts.WORKER_A) && c.transfer() == inFlightCall && c.receivedAt() < f.resumeAt())
        && f.webhookCalls().stream().anyMatch(c -> c.worker().equals(Facts.WORKER_A) && c.transfer() == inFlightCall);
    long fromStaleA = fromA - (inFlightArrivedLate ? 1 : 0);
    long staleAttempts = stale().stream().filter(e -> e.is(SideEffect.WEBHOOK)).count();
    if (f.observe()) {
      check("observe mode: the webhook received worker-a's stale calls (enforce mode would have blocked them)",
          fromStaleA == staleAttempts && staleAttempts > 0,
          fromStaleA + " calls from worker-a after it resumed, of " + staleAttempts + " attempted");
    } else {
      check("the webhook received nothing from worker-a after it resumed",
          fromStaleA == 0 && staleAttempts > 0,
          fromStaleA + " calls received; worker-a attempted " + staleAttempts + ", all blocked by its agent");
    }
  }

  /**
   * The notifications written into the outbox: one per committed transfer (the ledger says which committed), each
   * delivered by the relay and applied once by the receiver with its writer's token and an Idempotency-Key; none for
   * a transfer the fence rejected.
   */
  private void outbox() {
    Map<String, Long> committed = new java.util.TreeMap<>();
    f.db().ledger().forEach(r -> committed.put(r.worker() + "#" + r.transfer(), r.token()));
    Map<String, DatabaseState.OutboxRow> rows = new java.util.TreeMap<>();
    f.db().outbox().forEach(r -> rows.put(r.worker() + "#" + r.transfer(), r));
    boolean rowsMatch = rows.size() == f.db().outbox().size() && rows.keySet().equals(committed.keySet())
        && rows.entrySet().stream().allMatch(e -> e.getValue().token() == committed.get(e.getKey())
            && e.getValue().state().equals("delivered"));
    List<WebhookReceiver.Delivery> applied = f.deliveries().stream().filter(WebhookReceiver.Delivery::applied).toList();
    Map<String, Long> appliedPerTransfer = applied.stream()
        .collect(Collectors.groupingBy(d -> d.worker() + "#" + d.transfer(), Collectors.counting()));
    boolean onceEach = appliedPerTransfer.keySet().equals(committed.keySet())
        && appliedPerTransfer.values().stream().allMatch(n -> n == 1);
    boolean tokensAndKeys = f.deliveries().stream().allMatch(d -> d.key() != null && !d.key().isBlank()
        && committed.containsKey(d.worker() + "#" + d.transfer())
        && Long.toString(committed.get(d.worker() + "#" + d.transfer())).equals(d.token()));
    List<SideEffect> rejected = stale().stream().filter(e -> e.is(SideEffect.OUTBOX) && !e.ok()).toList();
    long staleRows = rejected.stream().filter(e -> f.outboxRow(e.worker(), e.transfer()) != null).count();
    long staleReceived = rejected.stream().mapToLong(e -> f.applied(e.worker(), e.transfer(), false)).sum();
    long fromB = applied.stream().filter(d -> Facts.WORKER_B.equals(d.worker())).count();
    long repeats = f.deliveries().size() - applied.size();
    check("the webhook receiver got each committed transfer's notification through the outbox once, with its"
            + " writer's token and an Idempotency-Key; worker-a's rejected transfers left no outbox row and sent it"
            + " nothing", rowsMatch && onceEach && tokensAndKeys && !rejected.isEmpty() && staleRows == 0
            && staleReceived == 0,
        f.db().outbox().size() + " outbox rows for " + committed.size() + " committed transfers, all delivered: "
            + rowsMatch + "; applied once each: " + onceEach + " (" + (applied.size() - fromB) + " of worker-a's with"
            + " token " + f.tokenA() + ", " + fromB + " of worker-b's with token " + f.tokenB() + "; " + repeats
            + " repeated deliveries ignored); every delivery with its transfer's token and an Idempotency-Key: "
            + tokensAndKeys + "; worker-a's " + rejected.size() + " rejected transfers after resuming: " + staleRows
            + " outbox rows, " + staleReceived + " deliveries");
  }

  private void staleAttempts() {
    List<SideEffect> stale = f.aAfterResume();
    Map<String, Verdict.Kind> expected = Map.of(
        SideEffect.JDBC, Verdict.Kind.REJECTED_BY_DATABASE,
        SideEffect.INVENTORY, Verdict.Kind.REJECTED_BY_SERVICE,
        SideEffect.KAFKA, Verdict.Kind.DROPPED_BY_CONSUMER,
        SideEffect.OUTBOX, Verdict.Kind.REJECTED_BY_DATABASE,
        SideEffect.WEBHOOK, f.observe() ? Verdict.Kind.ACCEPTED : Verdict.Kind.BLOCKED_BY_AGENT);
    List<String> wrong = stale.stream()
        .filter(e -> Verdict.of(e, f).kind() != expected.get(e.channel()) && !legitimate(Verdict.of(e, f).kind()))
        .map(e -> "transfer " + e.transfer() + " " + e.channel() + ": " + e.outcome()).toList();
    Set<String> channels = stale.stream().map(SideEffect::channel).collect(Collectors.toSet());
    check("every side effect worker-a attempted after resuming was stopped where expected"
            + " (database, HTTP fence, consumer fence, " + (f.observe() ? "observe: only counted" : "agent") + ")",
        wrong.isEmpty() && channels.equals(expected.keySet()),
        stale.size() + " side effects on " + new TreeSet<>(channels) + ", " + stale().size() + " of them stale"
            + (wrong.isEmpty() ? ""
            : "; not stopped as expected: " + wrong));
  }

  private void metrics() {
    MetricsSnapshot before = f.before();
    MetricsSnapshot after = f.after();
    List<SideEffect> stale = stale();
    long fn001 = stale.stream().filter(e -> SqlStates.STALE_TOKEN.equals(e.sqlState())).count();
    long http409 = stale.stream().filter(e -> e.httpStatus() == 409).count();
    long dropped = stale.stream().filter(e -> Verdict.of(e, f).kind() == Verdict.Kind.DROPPED_BY_CONSUMER).count();
    long webhook = stale.stream().filter(e -> e.is(SideEffect.WEBHOOK)).count();
    // The webhook call in flight at the freeze is not a stale attempt, but in observe mode the agent may still have
    // counted it as would_block: worker-a may have frozen just before the agent's decision rather than after it.
    SideEffect inFlight = f.inFlightAtFreeze();
    long maybeCounted = f.observe() && inFlight != null && inFlight.is(SideEffect.WEBHOOK)
        && Verdict.of(inFlight, f).kind() == Verdict.Kind.IN_FLIGHT ? 1 : 0;
    String outcome = f.observe() ? "would_block" : "blocked";
    long agentJdbc = delta(before, after, Facts.WORKER_A, "fencing_rejections_total", "channel", "jdbc",
        "reason", Rejection.STALE_TOKEN.label());
    long agentHttp = delta(before, after, Facts.WORKER_A, "fencing_rejections_total", "channel", "http",
        "reason", Rejection.STALE_TOKEN.label());
    long agentBlocked = delta(before, after, Facts.WORKER_A, "fencing_side_effects_total", "channel", "http",
        "fenced", "false", "outcome", outcome);
    long httpFence = delta(before, after, "inventory-service HTTP fence", "fencing_fence_rejections_total",
        "fence", "http", "reason", Rejection.STALE_TOKEN.label());
    long kafkaFence = delta(before, after, "audit-consumer Kafka fence", "fencing_fence_rejections_total",
        "fence", "kafka", "reason", Rejection.STALE_TOKEN.label());
    check("the counters agree with what happened",
        agentJdbc == fn001 && agentHttp == http409 && agentBlocked >= webhook
            && agentBlocked <= webhook + maybeCounted && httpFence == http409
            && kafkaFence == dropped,
        "worker-a's agent counted " + agentJdbc + "/" + fn001 + " FN001 rejections, " + agentHttp + "/" + http409
            + " 409s, " + agentBlocked + "/" + webhook + " webhook calls " + outcome
            + (maybeCounted > 0 ? " (one more may be the call in flight at the freeze)" : "") + "; the HTTP fence "
            + httpFence + "/" + http409 + " and the consumer fence " + kafkaFence + "/" + dropped
            + " stale rejections (counted/seen)");
  }

  private static long delta(MetricsSnapshot before, MetricsSnapshot after, String source, String name,
      String... labels) {
    return Math.round(after.value(source, name, labels) - before.value(source, name, labels));
  }

  /**
   * worker-a's side effects after resuming, less those a resource accepted before it saw worker-b's token (ordered
   * before worker-b by the fence; checked by the ordering claims) and the webhook call in flight at the freeze.
   */
  private List<SideEffect> stale() {
    return f.aAfterResume().stream().filter(e -> !legitimate(Verdict.of(e, f).kind())).toList();
  }

  private static boolean legitimate(Verdict.Kind kind) {
    return kind == Verdict.Kind.BEFORE_SUCCESSOR || kind == Verdict.Kind.IN_FLIGHT;
  }

  private List<SideEffect> all() {
    List<SideEffect> all = new ArrayList<>(f.a());
    all.addAll(f.b());
    return all;
  }

  /**
   * Tokens only go up along the table: every row carries worker-a's or worker-b's token, each worker's rows carry
   * its own, and no row with the old token follows one with the new.
   */
  private boolean ordered(List<Row> rows) {
    boolean seenB = false;
    for (Row r : rows) {
      long expected = r.worker().equals(Facts.WORKER_A) ? f.tokenA() : f.tokenB();
      if (r.token() != expected || (seenB && r.token() != f.tokenB())) {
        return false;
      }
      seenB |= r.token() == f.tokenB();
    }
    return true;
  }

  private String tokenSummary(List<Row> rows) {
    return rows.size() + " rows: " + summary(rows, r -> r.token() == f.tokenA(), "token " + f.tokenA()) + ", "
        + summary(rows, r -> r.token() == f.tokenB(), "token " + f.tokenB()) + ", "
        + rows.stream().filter(r -> r.token() != f.tokenA() && r.token() != f.tokenB()).count() + " other";
  }

  private static String summary(List<Row> rows, Predicate<Row> which, String label) {
    List<Row> match = rows.stream().filter(which).toList();
    return match.isEmpty() ? "0 with " + label : match.size() + " with " + label + " (ids " + match.get(0).id()
        + ".." + match.get(match.size() - 1).id() + ")";
  }

  /** The transfers a worker saw succeed on a channel are exactly that worker's rows. */
  private static boolean sameTransfers(List<Row> rows, List<SideEffect> effects, String channel) {
    if (effects.isEmpty()) {
      return true;
    }
    String worker = effects.get(0).worker();
    Set<Long> seen = effects.stream().filter(e -> e.is(channel) && e.ok()).map(SideEffect::transfer)
        .collect(Collectors.toCollection(TreeSet::new));
    // A write whose outcome the worker never learned (it timed out) may be stored or not; nothing else may be.
    Set<Long> maybe = effects.stream().filter(e -> e.is(channel) && e.indeterminate()).map(SideEffect::transfer)
        .collect(Collectors.toCollection(TreeSet::new));
    Set<Long> stored = rows.stream().filter(r -> r.worker().equals(worker)).map(Row::transfer)
        .collect(Collectors.toCollection(TreeSet::new));
    return stored.containsAll(seen) && stored.stream().allMatch(t -> seen.contains(t) || maybe.contains(t));
  }

  private static long okCount(List<SideEffect> effects, String channel) {
    return effects.stream().filter(e -> e.is(channel) && e.ok()).count();
  }
}
