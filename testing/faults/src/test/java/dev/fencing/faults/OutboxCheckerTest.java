package dev.fencing.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.faults.History.Accepted;
import dev.fencing.faults.History.Attempt;
import dev.fencing.faults.History.Outcome;
import dev.fencing.faults.OutboxReceiver.Delivery;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** Hand-made outbox histories: a clean one passes; a stale, a lost and a twice-applied event are caught. */
class OutboxCheckerTest {

  private final List<OutboxChecker.Event> events = new ArrayList<>();
  private final List<Accepted> committed = new ArrayList<>();
  private final List<Delivery> deliveries = new ArrayList<>();
  private final Map<String, Integer> applied = new TreeMap<>();
  private final List<Attempt> attempts = new ArrayList<>();

  /** A transaction of {@code writeId} committed under {@code token} (order {@code order}), its two events written. */
  private void committed(String writeId, long order, long token) {
    attempts.add(new Attempt(writeId, "w1.1", "pg", order, order + 1, "HOLDING", token, Outcome.ACKED, "OK", token));
    committed.add(new Accepted("pg", order, writeId, token, 0));
    for (String channel : OutboxChecker.CHANNELS) {
      events.add(new OutboxChecker.Event(writeId + "/" + channel, writeId, channel, token, "delivered", null));
    }
  }

  /** Each event of {@code writeId} delivered and applied once. */
  private void delivered(String writeId, long token) {
    for (String channel : OutboxChecker.CHANNELS) {
      String id = writeId + "/" + channel;
      boolean first = !applied.containsKey(id);
      deliveries.add(new Delivery(channel, id, token, "faults", first));
      applied.merge(id, first ? 1 : 0, Integer::sum);
    }
  }

  private OutboxChecker.Result check() {
    return OutboxChecker.check(events, committed, deliveries, applied, attempts);
  }

  @Test
  void aCleanHistoryWithARedeliveryPasses() {
    committed("w1.1:1", 1, 5);
    committed("w2.1:1", 2, 7);
    delivered("w2.1:1", 7);
    delivered("w1.1:1", 5); // an earlier token's committed event, delivered late: not stale
    delivered("w1.1:1", 5); // delivered again after its relay died: applied once
    OutboxChecker.Result r = check();
    assertThat(r.violations()).isEmpty();
    assertThat(r.summary()).isEqualTo(" outbox_events=4 outbox_deliveries=6 outbox_duplicates=2 outbox_applied=4"
        + " outbox_stale=0 outbox_lost=0 outbox_applied_twice=0");
  }

  @Test
  void anEventOfATransactionThatDidNotCommitIsStale() {
    committed("w1.1:1", 1, 5);
    delivered("w1.1:1", 5);
    // The stale holder's events, without its business row: an outbox table without the fence, written apart.
    events.add(new OutboxChecker.Event("w2.1:9/http", "w2.1:9", "http", 4, "delivered", null));
    deliveries.add(new Delivery("http", "w2.1:9/http", 4, "faults", true));
    applied.put("w2.1:9/http", 1);
    OutboxChecker.Result r = check();
    assertThat(r.stale()).isEqualTo(1);
    assertThat(r.violations()).anySatisfy(v -> assertThat(v).startsWith("outbox stale event: w2.1:9/http delivered"
        + " over http with token 4, but its transaction did not commit (no pg_write row w2.1:9)"));
  }

  @Test
  void anEventOfAStaleAcceptOrUnderAnotherTokenIsStale() {
    committed("w1.1:1", 1, 7);
    committed("w2.1:1", 2, 5); // admitted after token 7: a stale accept
    delivered("w1.1:1", 7);
    delivered("w2.1:1", 5);
    deliveries.add(new Delivery("kafka", "w1.1:1/kafka", 8, "faults", false));
    OutboxChecker.Result r = check();
    assertThat(r.stale()).isEqualTo(3);
    assertThat(r.violations()).anySatisfy(v -> assertThat(v).contains("w2.1:1/http").contains("stale accept"))
        .anySatisfy(v -> assertThat(v).contains("w1.1:1/kafka").contains("committed under token 7"));
  }

  @Test
  void aCommittedEventNotDeliveredOrNotAppliedOrMissingIsLost() {
    committed("w1.1:1", 1, 5);
    committed("w1.1:2", 2, 5);
    committed("w1.1:3", 3, 5);
    delivered("w1.1:1", 5);
    events.set(2, new OutboxChecker.Event("w1.1:2/http", "w1.1:2", "http", 5, "parked", "HTTP 500"));
    events.remove(5); // w1.1:3/kafka: its transaction committed without it
    OutboxChecker.Result r = check();
    // w1.1:2/http parked; w1.1:2/kafka and w1.1:3/http marked delivered, never applied; w1.1:3/kafka missing.
    assertThat(r.lost()).isEqualTo(4);
    assertThat(r.violations()).anySatisfy(v -> assertThat(v).isEqualTo("outbox lost: w1.1:2/http is still parked"
        + " after the drain (HTTP 500)"));
  }

  @Test
  void anEventAppliedTwiceIsCaught() {
    committed("w1.1:1", 1, 5);
    delivered("w1.1:1", 5);
    applied.put("w1.1:1/http", 2);
    OutboxChecker.Result r = check();
    assertThat(r.appliedTwice()).isEqualTo(1);
    assertThat(r.violations()).containsExactly("outbox applied twice: w1.1:1/http was applied 2 times");
  }
}
