package dev.fencing.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.demo.DatabaseState.Row;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The demo's claims on hand-made stories (tokens 2 and 3; freeze at 1000 ms, takeover at 4000, resume at 6000): the
 * usual one, the one where worker-a froze inside a transaction (a fence that has not seen worker-b's token rightly
 * accepts worker-a's writes, ordered before worker-b's), and broken ones, which must fail.
 */
class EndStateChecksTest {
  private static final String A = Facts.WORKER_A;
  private static final String B = Facts.WORKER_B;
  private static final String FN001 = "ERR SQLSTATE=FN001 org.postgresql.util.PSQLException: ERROR: fencing: stale"
      + " token 2 for lock 'ledger' on public.account: current fence token is 3";
  private static final String BLOCKED = "ERR dev.fencing.agent.bootstrap.FencingBlockedException: Fencing Agent"
      + " blocked a http side effect";
  private static final String TIMED_OUT = "ERR java.net.http.HttpTimeoutException: request timed out";

  /** One story under construction. */
  private static final class Story {
    final List<SideEffect> a = new ArrayList<>();
    final List<SideEffect> b = new ArrayList<>();
    final List<Consumed> consumed = new ArrayList<>();
    final List<WebhookReceiver.Call> calls = new ArrayList<>();
    final List<Row> ledger = new ArrayList<>();
    final List<Row> reservations = new ArrayList<>();
    final Map<String, Integer> counted = new TreeMap<>();
    /** Extra outbox rows and deliveries; by default every ledger row has its delivered event, applied once. */
    final List<DatabaseState.OutboxRow> extraRows = new ArrayList<>();
    final List<WebhookReceiver.Delivery> extraDeliveries = new ArrayList<>();

    /** A transfer all of whose side effects were accepted (moving 10 from account 1 to 2). */
    Story accepted(String worker, long transfer, long at, long token) {
      List<SideEffect> list = worker.equals(A) ? a : b;
      list.add(new SideEffect(worker, at, transfer, SideEffect.JDBC, "OK"));
      list.add(new SideEffect(worker, at, transfer, SideEffect.OUTBOX, "OK written"));
      list.add(new SideEffect(worker, at + 1, transfer, SideEffect.INVENTORY, "201 reserved"));
      list.add(new SideEffect(worker, at + 2, transfer, SideEffect.KAFKA, "OK offset=1"));
      list.add(new SideEffect(worker, at + 3, transfer, SideEffect.WEBHOOK, "204 "));
      ledger.add(new Row(ledger.size() + 1, worker, transfer, 1, 2, 10, token));
      reservations.add(new Row(reservations.size() + 1, worker, transfer, 0, 0, 10, token));
      consumed.add(new Consumed(at + 3, worker, transfer));
      calls.add(new WebhookReceiver.Call(at + 3, worker, transfer, Long.toString(token)));
      return this;
    }

    /** A stale transfer of worker-a, every side effect stopped where the demo expects it. */
    Story stopped(long transfer, long at) {
      a.add(new SideEffect(A, at, transfer, SideEffect.JDBC, FN001));
      a.add(new SideEffect(A, at, transfer, SideEffect.OUTBOX, "ERR not written: the transaction rolled back"));
      a.add(new SideEffect(A, at + 1, transfer, SideEffect.INVENTORY, "409 {}"));
      a.add(new SideEffect(A, at + 2, transfer, SideEffect.KAFKA, "OK offset=9"));
      a.add(new SideEffect(A, at + 3, transfer, SideEffect.WEBHOOK, BLOCKED));
      counted.merge("jdbc", 1, Integer::sum);
      counted.merge("http", 1, Integer::sum);
      counted.merge("kafka", 1, Integer::sum);
      counted.merge("blocked", 1, Integer::sum);
      return this;
    }

    Facts facts() {
      Map<Integer, Long> balances = new TreeMap<>();
      for (int id = 1; id <= Infrastructure.ACCOUNTS; id++) {
        balances.put(id, Infrastructure.OPENING_BALANCE);
      }
      for (Row r : ledger) {
        balances.merge(r.from(), -(long) r.amount(), Long::sum);
        balances.merge(r.to(), (long) r.amount(), Long::sum);
      }
      long stock = reservations.stream().mapToLong(Row::amount).sum();
      Apps.Status expired = new Apps.Status("EXPIRED", 2, "deadline_passed", "{}");
      List<DatabaseState.OutboxRow> outbox = new ArrayList<>();
      List<WebhookReceiver.Delivery> deliveries = new ArrayList<>();
      for (Row r : ledger) {
        String id = "event-" + r.worker() + "-" + r.transfer();
        outbox.add(new DatabaseState.OutboxRow(id, r.worker(), r.transfer(), r.token(), "delivered"));
        deliveries.add(new WebhookReceiver.Delivery(9000, r.worker(), r.transfer(), Long.toString(r.token()), id,
            true));
      }
      outbox.addAll(extraRows);
      deliveries.addAll(extraDeliveries);
      return new Facts(false, 2, 3, 100, 1000, 4000, 6000, 8000, expired, 5, expired,
          new Apps.Status("HOLDING", 3, null, "{}"), a, b, consumed, calls, deliveries,
          new DatabaseState(ledger, reservations, balances, stock, outbox), snapshot(Map.of()), snapshot(counted));
    }

    private static MetricsSnapshot snapshot(Map<String, Integer> n) {
      String rejections = "fencing_rejections_total{channel=\"%s\",lock=\"ledger\",reason=\"stale_token\"} %d";
      String agent = String.join("\n",
          String.format(rejections, "jdbc", n.getOrDefault("jdbc", 0)),
          String.format(rejections, "http", n.getOrDefault("http", 0)),
          "fencing_side_effects_total{channel=\"http\",fenced=\"false\",lock=\"ledger\",outcome=\"blocked\"} "
              + n.getOrDefault("blocked", 0));
      String httpFence = "fencing_fence_rejections_total{fence=\"http\",lock=\"ledger\",reason=\"stale_token\"} "
          + n.getOrDefault("http", 0);
      String kafkaFence = "fencing_fence_rejections_total{fence=\"kafka\",lock=\"ledger\",reason=\"stale_token\"} "
          + n.getOrDefault("kafka", 0);
      return MetricsSnapshot.scrape(List.of(new MetricsSnapshot.Source(A, () -> agent),
          new MetricsSnapshot.Source("inventory-service HTTP fence", () -> httpFence),
          new MetricsSnapshot.Source("audit-consumer Kafka fence", () -> kafkaFence)));
    }
  }

  @Test
  void theUsualStoryHolds() {
    Facts f = new Story().accepted(A, 1, 500, 2).accepted(B, 2, 4500, 3).stopped(2, 6010).stopped(3, 6210).facts();
    assertThat(EndStateChecks.run(f)).hasSize(10).allSatisfy(c -> assertThat(c.ok()).as(c.claim()).isTrue());
    assertThat(f.aAfterResume()).extracting(e -> Verdict.of(e, f).kind()).containsExactly(
        Verdict.Kind.REJECTED_BY_DATABASE, Verdict.Kind.REJECTED_BY_DATABASE, Verdict.Kind.REJECTED_BY_SERVICE,
        Verdict.Kind.DROPPED_BY_CONSUMER, Verdict.Kind.BLOCKED_BY_AGENT, Verdict.Kind.REJECTED_BY_DATABASE,
        Verdict.Kind.REJECTED_BY_DATABASE, Verdict.Kind.REJECTED_BY_SERVICE, Verdict.Kind.DROPPED_BY_CONSUMER,
        Verdict.Kind.BLOCKED_BY_AGENT);
  }

  private static final String OUTBOX_CLAIM = "the webhook receiver got each committed transfer's notification";

  @Test
  void aRepeatedOutboxDeliveryIsAppliedOnceAndTheStoryHolds() {
    Story s = new Story().accepted(A, 1, 500, 2).accepted(B, 2, 4500, 3).stopped(3, 6010);
    s.extraDeliveries.add(new WebhookReceiver.Delivery(9500, B, 2, "3", "event-worker-b-2", false));
    assertThat(EndStateChecks.run(s.facts())).allSatisfy(c -> assertThat(c.ok()).as(c.claim() + ": "
        + c.evidence()).isTrue());
  }

  @Test
  void aStaleOutboxEventThatExistsOrReachedTheReceiverFailsTheStory() {
    Story row = new Story().accepted(A, 1, 500, 2).accepted(B, 2, 4500, 3).stopped(3, 6010);
    row.extraRows.add(new DatabaseState.OutboxRow("stale", A, 3, 2, "pending"));
    assertThat(EndStateChecks.run(row.facts())).filteredOn(c -> !c.ok()).extracting(EndStateChecks.Check::claim)
        .anyMatch(claim -> claim.startsWith(OUTBOX_CLAIM));

    Story delivered = new Story().accepted(A, 1, 500, 2).accepted(B, 2, 4500, 3).stopped(3, 6010);
    delivered.extraDeliveries.add(new WebhookReceiver.Delivery(9500, A, 3, "2", "stale", true));
    assertThat(EndStateChecks.run(delivered.facts())).filteredOn(c -> !c.ok()).extracting(EndStateChecks.Check::claim)
        .anyMatch(claim -> claim.startsWith(OUTBOX_CLAIM));

    Story twice = new Story().accepted(A, 1, 500, 2).accepted(B, 2, 4500, 3).stopped(3, 6010);
    twice.extraDeliveries.add(new WebhookReceiver.Delivery(9500, B, 2, "3", "another-key", true));
    assertThat(EndStateChecks.run(twice.facts())).filteredOn(c -> !c.ok()).extracting(EndStateChecks.Check::claim)
        .anyMatch(claim -> claim.startsWith(OUTBOX_CLAIM));
  }

  @Test
  void writesAcceptedBeforeTheResourceSawTheSuccessorsTokenAreOrderedBeforeIt() {
    // worker-a froze inside transfer 2's transaction; worker-b's first write waited for it, so worker-a's transfer 2
    // reached every fenced resource first. Its webhook call after resuming is still blocked.
    Story s = new Story().accepted(A, 1, 500, 2).accepted(A, 2, 6010, 2);
    s.a.remove(s.a.size() - 1);
    s.calls.remove(s.calls.size() - 1);
    s.a.add(new SideEffect(A, 6013, 2, SideEffect.WEBHOOK, BLOCKED));
    s.counted.merge("blocked", 1, Integer::sum);
    Facts f = s.accepted(B, 3, 6100, 3).stopped(3, 6300).facts();
    assertThat(EndStateChecks.run(f)).allSatisfy(c -> assertThat(c.ok()).as(c.claim() + ": " + c.evidence()).isTrue());
    assertThat(f.aAfterResume().subList(0, 3)).allSatisfy(e ->
        assertThat(Verdict.of(e, f).kind()).isEqualTo(Verdict.Kind.BEFORE_SUCCESSOR));
  }

  @Test
  void anEventSentBeforeTheWorkerHeldTheLockIsNoHoldersEvent() {
    // Observe mode lets worker-a's first transfer out before its lease is granted, untagged: the database and the
    // service refuse it, the broker acknowledges the event (after worker-a was seen holding) and the consumer fence
    // drops it. Only a holder's event missing at the consumer fails the claim.
    Story s = new Story();
    s.a.add(new SideEffect(A, 40, 1, SideEffect.JDBC, "ERR SQLSTATE=FN002 org.postgresql.util.PSQLException: no token"));
    s.a.add(new SideEffect(A, 45, 1, SideEffect.INVENTORY, "428 {}"));
    s.a.add(new SideEffect(A, 120, 1, SideEffect.KAFKA, "OK offset=0"));
    s.a.add(new SideEffect(A, 121, 1, SideEffect.WEBHOOK, "204 "));
    s.calls.add(new WebhookReceiver.Call(121, A, 1, ""));
    s.accepted(A, 2, 500, 2).accepted(B, 3, 4500, 3).stopped(3, 6010);
    Facts f = s.facts();
    assertThat(EndStateChecks.run(f)).allSatisfy(c -> assertThat(c.ok()).as(c.claim() + ": " + c.evidence()).isTrue());
    assertThat(f.aStarting()).hasSize(3); // the webhook call started after worker-a was seen holding

    s.consumed.removeIf(c -> c.worker().equals(A) && c.transfer() == 2);
    assertThat(EndStateChecks.run(s.facts())).filteredOn(c -> !c.ok()).extracting(EndStateChecks.Check::evidence)
        .singleElement().asString().contains("missing: [worker-a#2 at 502");
  }

  @Test
  void aStaleWriteAfterTheSuccessorsFailsTheStory() {
    // A reservation of worker-a that the service accepted after one of worker-b's: the fence did not order them.
    Story s = new Story().accepted(A, 1, 500, 2).accepted(B, 2, 4500, 3).stopped(3, 6010);
    s.a.set(s.a.size() - 3, new SideEffect(A, 6011, 3, SideEffect.INVENTORY, "201 reserved"));
    s.reservations.add(new Row(3, A, 3, 0, 0, 10, 2));
    s.counted.merge("http", -1, Integer::sum);
    Facts f = s.facts();
    assertThat(EndStateChecks.run(f)).filteredOn(c -> !c.ok()).extracting(EndStateChecks.Check::claim)
        .anyMatch(claim -> claim.startsWith("every reservation made after the takeover"))
        .anyMatch(claim -> claim.startsWith("every side effect worker-a attempted after resuming"));
  }

  @Test
  void aStaleWebhookCallThatGotThroughFailsTheStory() {
    Story s = new Story().accepted(A, 1, 500, 2).accepted(B, 2, 4500, 3).stopped(3, 6010);
    s.a.set(s.a.size() - 1, new SideEffect(A, 6013, 3, SideEffect.WEBHOOK, "204 "));
    s.calls.add(new WebhookReceiver.Call(6013, A, 3, "2"));
    s.counted.merge("blocked", -1, Integer::sum);
    assertThat(EndStateChecks.run(s.facts())).filteredOn(c -> !c.ok()).extracting(EndStateChecks.Check::claim)
        .contains("the webhook received nothing from worker-a after it resumed");
  }

  @Test
  void aReservationInFlightAtTheFreezeThatTimedOutOnTheWorkersClockIsInFlightNotAFailure() {
    // worker-a froze while its POST of transfer 2 was at the service: the service answered at once, but worker-a's
    // client timed out on waking (its 5 s timeout ran through the freeze). The service took it before worker-b's.
    Story s = inFlightReservation();
    s.reservations.add(new Row(2, A, 2, 0, 0, 10, 2));
    Facts f = s.accepted(B, 3, 4500, 3).stopped(3, 6300).facts();
    assertThat(EndStateChecks.run(f)).allSatisfy(c -> assertThat(c.ok()).as(c.claim() + ": " + c.evidence()).isTrue());
    assertThat(Verdict.of(f.inFlightAtFreeze(), f).kind()).isEqualTo(Verdict.Kind.IN_FLIGHT);

    // The same without the row: the service never got it. Still in flight, not a failure.
    Story lost = inFlightReservation();
    Facts g = lost.accepted(B, 3, 4500, 3).stopped(3, 6300).facts();
    assertThat(EndStateChecks.run(g)).allSatisfy(c -> assertThat(c.ok()).as(c.claim() + ": " + c.evidence()).isTrue());
  }

  @Test
  void aWebhookCallInFlightAtTheFreezeThatTimedOutOnTheWorkersClockIsInFlightNotAFailure() {
    // worker-a froze while its webhook call of transfer 2 was out: the receiver got it before the freeze, but
    // worker-a's client timed out on waking. The agent decided it before the freeze; it is not a stale attempt.
    Story s = new Story().accepted(A, 1, 500, 2);
    s.a.add(new SideEffect(A, 900, 2, SideEffect.JDBC, "OK"));
    s.ledger.add(new Row(s.ledger.size() + 1, A, 2, 1, 2, 10, 2));
    s.a.add(new SideEffect(A, 901, 2, SideEffect.INVENTORY, "201 reserved"));
    s.reservations.add(new Row(s.reservations.size() + 1, A, 2, 0, 0, 10, 2));
    s.a.add(new SideEffect(A, 902, 2, SideEffect.KAFKA, "OK offset=2"));
    s.consumed.add(new Consumed(902, A, 2));
    s.calls.add(new WebhookReceiver.Call(903, A, 2, "2"));
    s.a.add(new SideEffect(A, 6000, 2, SideEffect.WEBHOOK, TIMED_OUT));
    Facts f = s.accepted(B, 3, 4500, 3).stopped(3, 6300).facts();
    assertThat(Verdict.of(f.inFlightAtFreeze(), f).kind()).isEqualTo(Verdict.Kind.IN_FLIGHT);
    assertThat(EndStateChecks.run(f)).allSatisfy(c -> assertThat(c.ok()).as(c.claim() + ": " + c.evidence()).isTrue());

    // A timed-out webhook call that is not the first side effect after the resume is a failure to stop it.
    Story late = new Story().accepted(A, 1, 500, 2).accepted(B, 3, 4500, 3).stopped(3, 6300);
    late.a.add(new SideEffect(A, 6400, 4, SideEffect.WEBHOOK, TIMED_OUT));
    Facts g = late.facts();
    assertThat(EndStateChecks.run(g)).filteredOn(c -> !c.ok()).extracting(EndStateChecks.Check::claim)
        .anyMatch(claim -> claim.startsWith("every side effect worker-a attempted after resuming"));
  }

  private static final String CONNECTION_CLOSED = "ERR SQLSTATE=null java.sql.SQLException: Connection is closed";

  @Test
  void aTransactionInFlightAtTheFreezeThatPostgresEndedIsInFlightNotAFailure() {
    // worker-a froze inside transfer 2's transaction; PostgreSQL ended it after the agent's idle bound (one TTL) and
    // closed the session. On waking, the transfer's next statement failed on the closed connection: nothing written.
    Story s = new Story().accepted(A, 1, 500, 2);
    s.a.add(new SideEffect(A, 6000, 2, SideEffect.JDBC, CONNECTION_CLOSED));
    s.a.add(new SideEffect(A, 6000, 2, SideEffect.OUTBOX, "ERR not written: the transaction rolled back"));
    s.a.add(new SideEffect(A, 6001, 2, SideEffect.INVENTORY, "409 {}"));
    s.a.add(new SideEffect(A, 6002, 2, SideEffect.KAFKA, "OK offset=9"));
    s.a.add(new SideEffect(A, 6003, 2, SideEffect.WEBHOOK, BLOCKED));
    s.counted.merge("http", 1, Integer::sum);
    s.counted.merge("kafka", 1, Integer::sum);
    s.counted.merge("blocked", 1, Integer::sum);
    Facts f = s.accepted(B, 3, 4500, 3).stopped(3, 6300).facts();
    assertThat(Verdict.of(f.inFlightAtFreeze(), f).kind()).isEqualTo(Verdict.Kind.IN_FLIGHT);
    assertThat(EndStateChecks.run(f)).allSatisfy(c -> assertThat(c.ok()).as(c.claim() + ": " + c.evidence()).isTrue());

    // A statement failing so later, after the first attempt after the resume, is a failure to stop it.
    Story late = new Story().accepted(A, 1, 500, 2).accepted(B, 3, 4500, 3).stopped(3, 6300);
    late.a.add(new SideEffect(A, 6500, 4, SideEffect.JDBC, CONNECTION_CLOSED));
    assertThat(EndStateChecks.run(late.facts())).filteredOn(c -> !c.ok()).extracting(EndStateChecks.Check::claim)
        .anyMatch(claim -> claim.startsWith("every side effect worker-a attempted after resuming"));
  }

  @Test
  void aTimedOutReservationStoredAfterTheSuccessorsFailsTheStory() {
    Story s = inFlightReservation();
    s.accepted(B, 3, 4500, 3).stopped(3, 6300);
    s.reservations.add(new Row(s.reservations.size() + 1, A, 2, 0, 0, 10, 2));
    Facts f = s.facts();
    assertThat(Verdict.of(f.inFlightAtFreeze(), f).kind()).isNotEqualTo(Verdict.Kind.IN_FLIGHT);
    assertThat(EndStateChecks.run(f)).filteredOn(c -> !c.ok()).extracting(EndStateChecks.Check::claim)
        .anyMatch(claim -> claim.startsWith("every side effect worker-a attempted after resuming"));
  }

  /** Transfer 1 accepted; transfer 2 committed before the freeze, its POST in flight, the rest stopped after. */
  private static Story inFlightReservation() {
    Story s = new Story().accepted(A, 1, 500, 2);
    s.a.add(new SideEffect(A, 900, 2, SideEffect.JDBC, "OK"));
    s.ledger.add(new Row(s.ledger.size() + 1, A, 2, 1, 2, 10, 2));
    s.a.add(new SideEffect(A, 6000, 2, SideEffect.INVENTORY,
        "ERR java.net.http.HttpTimeoutException: request timed out"));
    s.a.add(new SideEffect(A, 6019, 2, SideEffect.KAFKA, "OK offset=5"));
    s.a.add(new SideEffect(A, 6020, 2, SideEffect.WEBHOOK, BLOCKED));
    s.counted.merge("kafka", 1, Integer::sum);
    s.counted.merge("blocked", 1, Integer::sum);
    return s;
  }
}
