package dev.fencing.demo;

import java.util.List;

/**
 * Everything the story produced, gathered after the workers were drained: the moments and tokens the orchestrator
 * observed (epoch milliseconds), what each worker says it attempted, what the consumer received, what the webhook
 * received, what the databases hold, and the counters before the freeze and at the end.
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
    DatabaseState db,
    MetricsSnapshot before,
    MetricsSnapshot after) {

  static final String WORKER_A = "worker-a";
  static final String WORKER_B = "worker-b";

  /** What worker-a attempted after it was resumed: the stale side effects. */
  List<SideEffect> aAfterResume() {
    return a.stream().filter(e -> e.at() >= resumeAt).toList();
  }

  /**
   * The side effect worker-a was in the middle of when it froze: the first one it reported after resuming (its loop
   * is single-threaded). It may have left the JVM before the freeze, so it may legitimately have been accepted.
   */
  SideEffect inFlightAtFreeze() {
    List<SideEffect> after = aAfterResume();
    return after.isEmpty() ? null : after.get(0);
  }

  List<SideEffect> aBeforeFreeze() {
    return a.stream().filter(e -> e.at() < freezeAt).toList();
  }

  /** Whether the audit consumer received the event of this worker's transfer. */
  boolean consumed(String worker, long transfer) {
    return consumed.stream().anyMatch(c -> c.worker().equals(worker) && c.transfer() == transfer);
  }

  /** Whether the webhook received the call of this worker's transfer. */
  boolean webhookReceived(String worker, long transfer) {
    return webhookCalls.stream().anyMatch(c -> c.worker().equals(worker) && c.transfer() == transfer);
  }
}
