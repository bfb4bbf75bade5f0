package dev.fencing.demo;

import dev.fencing.protocol.SqlStates;
/**
 * What became of one side effect, in words: a short category (for the per-phase counts) and a sentence (for the
 * list of the stale holder's attempts). Kafka events and webhook calls are followed to their receivers: an event
 * the broker acknowledged counts as accepted only if the consumer's code received it.
 */
record Verdict(Kind kind, String sentence) {

  enum Kind {
    ACCEPTED("accepted"),
    BEFORE_SUCCESSOR("accepted before that resource saw worker-b's token"),
    IN_FLIGHT("in flight at the freeze"),
    BLOCKED_BY_AGENT("blocked by its agent"),
    REJECTED_BY_DATABASE("rejected by PostgreSQL's fence"),
    REJECTED_BY_SERVICE("refused by the inventory service's HTTP fence"),
    DROPPED_BY_CONSUMER("dropped by the consumer fence"),
    FAILED("failed otherwise");

    final String label;

    Kind(String label) {
      this.label = label;
    }
  }

  static Verdict of(SideEffect e, Facts facts) {
    if (e.blockedByAgent()) {
      return new Verdict(Kind.BLOCKED_BY_AGENT, "BLOCKED by " + e.worker() + "'s agent before it left the JVM ("
          + (e.is(SideEffect.WEBHOOK) ? "an unfenced destination" : "no valid lease") + "; the app got "
          + (e.is(SideEffect.JDBC) ? "a SQLException, SQLSTATE FN003" : e.is(SideEffect.KAFKA)
              ? "a failed send future (KafkaException)" : "an IOException") + ")");
    }
    if (facts.staleAttempt(e) && facts.beforeSuccessor(e) && e.is(SideEffect.OUTBOX)) {
      return new Verdict(Kind.BEFORE_SUCCESSOR, "written in that same transaction, so ordered before every write of"
          + " worker-b too; " + delivered(e, facts));
    }
    if (facts.staleAttempt(e) && facts.beforeSuccessor(e)) {
      return new Verdict(Kind.BEFORE_SUCCESSOR, "accepted: " + resource(e) + " had not seen worker-b's token yet ("
          + (e.is(SideEffect.JDBC) ? "worker-a froze inside this transaction after it passed the fence, and the fence"
              + " held worker-b's first write back until it ended" : "worker-b had not reached it since the takeover")
          + "), so it is ordered before every write of worker-b");
    }
    if (e.is(SideEffect.WEBHOOK) && e.equals(facts.inFlightAtFreeze()) && e.ok()
        && facts.webhookReceived(e.worker(), e.transfer())) {
      return new Verdict(Kind.IN_FLIGHT, "delivered: it was IN FLIGHT when worker-a froze (decided and sent before"
          + " the freeze, answered after)");
    }
    if (e.is(SideEffect.WEBHOOK) && e.equals(facts.inFlightAtFreeze()) && e.indeterminate()) {
      // Sent before the freeze (after it, the agent blocks the call with its own exception, never a timeout); the
      // freeze outlasts the worker's 5 s timeout, which fires on waking before the answer is read.
      return new Verdict(Kind.IN_FLIGHT, "timed out on worker-a's clock: it was IN FLIGHT when worker-a froze (decided"
          + " and sent before the freeze); the webhook " + (facts.webhookReceived(e.worker(), e.transfer())
              ? "received it" : "never received it"));
    }
    if (e.is(SideEffect.JDBC) && e.equals(facts.inFlightAtFreeze()) && e.indeterminate() && !facts.ledgerRowStored(e)) {
      // worker-a froze inside this transfer's transaction. On a fenced database the agent bounds a transaction's idle
      // time to one TTL, so PostgreSQL ended the transaction and its session while worker-a slept: on waking, its
      // next statement found the connection gone. Nothing of it was written, and worker-b was not held back.
      return new Verdict(Kind.IN_FLIGHT, "NEVER WRITTEN: it was IN FLIGHT when worker-a froze (its transaction open);"
          + " PostgreSQL ended that transaction and its session after the agent's bound on idle transactions (one"
          + " TTL), so the app's next statement found the connection closed");
    }
    if (e.is(SideEffect.INVENTORY) && e.equals(facts.inFlightAtFreeze()) && e.indeterminate()
        && facts.noRowAfterSuccessor(e)) {
      // The freeze outlasts the worker's 5 s HTTP timeout, so a POST caught at the service when worker-a froze
      // times out on waking, on worker-a's own clock, although the service may have answered long before.
      return new Verdict(Kind.IN_FLIGHT, "timed out on worker-a's clock: it was IN FLIGHT when worker-a froze (sent"
          + " before the freeze, with token " + facts.tokenA() + "); the service "
          + (facts.reservationStored(e) ? "took it before any of worker-b's" : "never stored it"));
    }
    return switch (e.channel()) {
      case SideEffect.JDBC -> jdbc(e);
      case SideEffect.INVENTORY -> inventory(e);
      case SideEffect.KAFKA -> kafka(e, facts);
      case SideEffect.OUTBOX -> outbox(e, facts);
      case SideEffect.WEBHOOK -> e.ok()
          ? new Verdict(Kind.ACCEPTED, "DELIVERED to the webhook, which checks no token"
              + (facts.observe() ? " (observe mode: the agent let it out and counted it as would_block)" : ""))
          : failed(e);
      default -> failed(e);
    };
  }

  private static String resource(SideEffect e) {
    return switch (e.channel()) {
      case SideEffect.JDBC -> "the bank database";
      case SideEffect.INVENTORY -> "the inventory service";
      default -> "the audit consumer";
    };
  }

  private static Verdict jdbc(SideEffect e) {
    if (e.ok()) {
      return new Verdict(Kind.ACCEPTED, "committed");
    }
    String state = e.sqlState();
    if (SqlStates.STALE_TOKEN.equals(state)) {
      String detail = e.staleDetail();
      return new Verdict(Kind.REJECTED_BY_DATABASE, "REJECTED by the fence on bank.account: SQLSTATE FN001, stale "
          + (detail == null ? "token" : detail) + "; rolled back, no money moved");
    }
    if (SqlStates.MISSING_TOKEN.equals(state)) {
      return new Verdict(Kind.REJECTED_BY_DATABASE, "REJECTED by the fence on bank.account: SQLSTATE FN002, no token;"
          + " rolled back");
    }
    return failed(e);
  }

  private static Verdict inventory(SideEffect e) {
    int status = e.httpStatus();
    if (e.ok()) {
      return new Verdict(Kind.ACCEPTED, status + ": reserved");
    }
    if (status == 409) {
      return new Verdict(Kind.REJECTED_BY_SERVICE, "409 Conflict from the inventory service's HTTP fence: stale token;"
          + " nothing reserved");
    }
    if (status == 428) {
      return new Verdict(Kind.REJECTED_BY_SERVICE, "428 from the inventory service's HTTP fence: no token");
    }
    return failed(e);
  }

  private static Verdict kafka(SideEffect e, Facts facts) {
    if (!e.ok()) {
      return failed(e);
    }
    if (facts.consumed(e.worker(), e.transfer())) {
      return new Verdict(Kind.ACCEPTED, "sent and consumed by audit-consumer");
    }
    return new Verdict(Kind.DROPPED_BY_CONSUMER, "sent to the fenced topic '" + Infrastructure.TOPIC + "', then"
        + " DROPPED by the consumer fence: the audit consumer's code never saw it");
  }

  private static Verdict outbox(SideEffect e, Facts facts) {
    DatabaseState.OutboxRow row = facts.outboxRow(e.worker(), e.transfer());
    long received = facts.applied(e.worker(), e.transfer(), false);
    if (e.ok() && row != null && facts.applied(e.worker(), e.transfer(), true) == 1) {
      return new Verdict(Kind.ACCEPTED, delivered(e, facts));
    }
    SideEffect transaction = (e.worker().equals(Facts.WORKER_A) ? facts.a() : facts.b()).stream()
        .filter(t -> t.is(SideEffect.JDBC) && t.transfer() == e.transfer()).findFirst().orElse(null);
    if (!e.ok() && row == null && received == 0 && transaction != null && transaction.blockedByAgent()) {
      return new Verdict(Kind.BLOCKED_BY_AGENT, "NEVER WRITTEN: the agent blocked its transaction; the receiver never"
          + " saw it");
    }
    if (!e.ok() && row == null && received == 0) {
      return new Verdict(Kind.REJECTED_BY_DATABASE, "NEVER WRITTEN: its outbox row was in the rejected transaction"
          + " and rolled back with it; the relay had nothing to deliver, the receiver never saw it");
    }
    return new Verdict(Kind.FAILED, e.outcome() + " (outbox row: " + (row == null ? "none" : row.state() + ", token "
        + row.token()) + "; deliveries received: " + received + ")");
  }

  private static String delivered(SideEffect e, Facts facts) {
    DatabaseState.OutboxRow row = facts.outboxRow(e.worker(), e.transfer());
    long received = facts.applied(e.worker(), e.transfer(), false);
    return "committed with the transfer, delivered by the relay with token " + (row == null ? "?" : row.token())
        + " and applied once by the receiver" + (received > 1 ? " (" + (received - 1) + " repeat ignored by its"
            + " Idempotency-Key)" : "");
  }

  private static Verdict failed(SideEffect e) {
    return new Verdict(Kind.FAILED, e.outcome());
  }
}
