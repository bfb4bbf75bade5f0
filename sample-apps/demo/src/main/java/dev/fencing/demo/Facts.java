package dev.fencing.demo;

import java.util.List;

/**
 * Everything the story produced, gathered after the workers were drained: the moments and tokens the orchestrator
 * observed (epoch milliseconds), what each worker says it attempted, what the consumer received, what the webhook
 * received (the workers' direct calls, and the outbox relay's deliveries), what the databases hold, and the counters
 * before the freeze and at the end.
 */
record Facts(
    boolean observe,
    long tokenA,
    long tokenB,
    long aHoldingAt,
    long freezeAt,
    long takeoverAt,
    long resumeAt,
    long drainedAt,
    Apps.Status aWoke,
    long aKnewWithinMs,
    Apps.Status finalA,
    Apps.Status finalB,
    List<SideEffect> a,
    List<SideEffect> b,
    List<Consumed> consumed,
    List<WebhookReceiver.Call> webhookCalls,
    List<WebhookReceiver.Delivery> deliveries,
    DatabaseState db,
    MetricsSnapshot before,
    MetricsSnapshot after) {

  static final String WORKER_A = "worker-a";
  static final String WORKER_B = "worker-b";

  /** What worker-a attempted after it was resumed: the stale side effects. */
  List<SideEffect> aAfterResume() {
    return a.stream().filter(e -> e.at() >= resumeAt).toList();
  }

  /** Whether {@code e} is one of worker-a's attempts after it resumed. */
  boolean staleAttempt(SideEffect e) {
    return e.worker().equals(WORKER_A) && e.at() >= resumeAt;
  }

  /**
   * Whether the resource itself ordered this accepted side effect of worker-a before everything of worker-b: fencing
   * promises that order, not wall-clock time. A fence that has not seen worker-b's token yet rightly accepts
   * worker-a's (worker-b's first transfer may wait for a transaction worker-a was frozen in). Judged from the
   * resource's own records: the row ids of the ledger and the reservations, the consumer's order of receipt.
   */
  boolean beforeSuccessor(SideEffect e) {
    if (!e.ok()) {
      return false;
    }
    return switch (e.channel()) {
      case SideEffect.JDBC, SideEffect.OUTBOX -> rowBeforeSuccessor(db.ledger(), e);
      case SideEffect.INVENTORY -> rowBeforeSuccessor(db.reservations(), e);
      case SideEffect.KAFKA -> {
        int index = -1;
        int firstB = Integer.MAX_VALUE;
        for (int i = 0; i < consumed.size(); i++) {
          Consumed c = consumed.get(i);
          if (c.worker().equals(e.worker()) && c.transfer() == e.transfer()) {
            index = i;
          } else if (c.worker().equals(WORKER_B)) {
            firstB = Math.min(firstB, i);
          }
        }
        yield index >= 0 && index < firstB;
      }
      default -> false;
    };
  }

  /** Whether the service stored a reservation for {@code e}'s transfer. */
  boolean reservationStored(SideEffect e) {
    return db.reservations().stream().anyMatch(r -> r.worker().equals(e.worker()) && r.transfer() == e.transfer());
  }

  /** Whether the bank's ledger has a row of {@code e}'s transfer. */
  boolean ledgerRowStored(SideEffect e) {
    return db.ledger().stream().anyMatch(r -> r.worker().equals(e.worker()) && r.transfer() == e.transfer());
  }

  /**
   * For a reservation whose outcome its worker never learned: the service either has no row for it, or stored it
   * before every row of worker-b (as the fence must order it).
   */
  boolean noRowAfterSuccessor(SideEffect e) {
    return !reservationStored(e) || rowBeforeSuccessor(db.reservations(), e);
  }

  private boolean rowBeforeSuccessor(List<DatabaseState.Row> rows, SideEffect e) {
    long firstB = rows.stream().filter(r -> r.token() == tokenB).mapToLong(DatabaseState.Row::id).min()
        .orElse(Long.MAX_VALUE);
    return rows.stream().anyMatch(r -> r.worker().equals(e.worker()) && r.transfer() == e.transfer()
        && r.token() == tokenA && r.id() < firstB);
  }

  /**
   * The side effect worker-a was in the middle of when it froze: the first one it reported after resuming (its loop
   * is single-threaded). It may have left the JVM before the freeze, so it may legitimately have been accepted.
   */
  SideEffect inFlightAtFreeze() {
    List<SideEffect> after = aAfterResume();
    return after.isEmpty() ? null : after.get(0);
  }

  /** worker-a's side effects before the freeze that surely carried its token (see {@link #sentWhileHolding}). */
  List<SideEffect> aHoldingBeforeFreeze() {
    return a.stream().filter(this::sentWhileHolding).toList();
  }

  /** worker-a's side effects before the freeze that may have left before it held the lock. */
  List<SideEffect> aStarting() {
    return a.stream().filter(e -> e.at() < freezeAt && !sentWhileHolding(e)).toList();
  }

  /**
   * Whether this side effect surely left its worker while the worker held the lock, tagged with its token. A worker's
   * loop is sequential, so a side effect started after the worker's previous report: if that report came after the
   * orchestrator saw the worker HOLDING (and, for worker-a, this one ended before the freeze), the agent tagged it.
   * One started earlier may have left untagged before the lease was granted (observe mode lets it out; the broker
   * acknowledges it and the consumer fence rightly drops it), so no claim is made about it.
   */
  boolean sentWhileHolding(SideEffect e) {
    boolean isA = e.worker().equals(WORKER_A);
    List<SideEffect> own = isA ? a : b;
    int i = own.indexOf(e);
    if (i <= 0) {
      return false;
    }
    long startedAfter = own.get(i - 1).at();
    return isA ? startedAfter >= aHoldingAt && e.at() < freezeAt : startedAfter >= takeoverAt;
  }

  /** Whether the audit consumer received the event of this worker's transfer. */
  boolean consumed(String worker, long transfer) {
    return consumed.stream().anyMatch(c -> c.worker().equals(worker) && c.transfer() == transfer);
  }

  /** The outbox's event of this worker's transfer, or null: it exists only if the transfer committed. */
  DatabaseState.OutboxRow outboxRow(String worker, long transfer) {
    return db.outbox().stream().filter(r -> worker.equals(r.worker()) && r.transfer() == transfer).findFirst()
        .orElse(null);
  }

  /** How many deliveries of this worker's transfer's notification the receiver applied (received at all). */
  long applied(String worker, long transfer, boolean appliedOnly) {
    return deliveries.stream().filter(d -> worker.equals(d.worker()) && d.transfer() == transfer)
        .filter(d -> !appliedOnly || d.applied()).count();
  }

  /** Whether the webhook received the call of this worker's transfer. */
  boolean webhookReceived(String worker, long transfer) {
    return webhookCalls.stream().anyMatch(c -> c.worker().equals(worker) && c.transfer() == transfer);
  }
}
