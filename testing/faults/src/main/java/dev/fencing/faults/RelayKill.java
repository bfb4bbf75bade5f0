package dev.fencing.faults;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The relay kill of every {@code --work=outbox} trial: the HTTP receiver holds the next delivery after it applied the
 * event and before it answers ({@link OutboxReceiver#holdNext()}); the relay that claimed that event (its
 * {@code claimed_by}) is SIGKILLed while it waits for the answer, so it never marks the event delivered; then the
 * delivery is let go and the relay's next incarnation started. The event's claim expires and a relay delivers it
 * again: the receiver must apply it once. With no delivery in flight within {@value #WAIT_MS} ms, a relay drawn
 * from the seed is killed (with whatever it had claimed).
 */
final class RelayKill {
  static final long WAIT_MS = 3_000;

  private final OutboxRelays relays;
  private final OutboxReceiver receiver;
  /** The outbox's database, where the held event's {@code claimed_by} is read. */
  private final String outboxUrl;
  private final Random random;
  private int midDelivery;

  RelayKill(OutboxRelays relays, OutboxReceiver receiver, String outboxUrl, Random random) {
    this.relays = relays;
    this.receiver = receiver;
    this.outboxUrl = outboxUrl;
    this.random = random;
  }

  /** Kills one relay and starts it again; what it did, for the trial's line. */
  String inject() {
    OutboxReceiver.Hold hold = receiver.holdNext();
    String eventId = null;
    try {
      eventId = hold.held.get(WAIT_MS, TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      if (!receiver.cancel(hold)) {
        // A delivery took the hold just now.
        try {
          eventId = hold.held.get(1, TimeUnit.SECONDS);
        } catch (TimeoutException | ExecutionException e2) {
          eventId = null;
        } catch (InterruptedException e2) {
          Thread.currentThread().interrupt();
        }
      }
    } catch (ExecutionException e) {
      eventId = null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    int victim;
    String what;
    try {
      victim = eventId == null ? -1 : relays.indexOf(claimedBy(eventId));
      if (victim >= 0) {
        midDelivery++;
        what = "relay " + relays.kill(victim) + " killed mid-delivery of " + eventId;
      } else {
        victim = random.nextInt(relays.size());
        what = "relay " + relays.kill(victim) + " killed (" + (eventId == null ? "no HTTP delivery in flight"
            : eventId + "'s claim not found") + ")";
      }
    } finally {
      hold.release();
    }
    relays.restart(victim);
    return what;
  }

  /** How many kills caught a relay between the receiver's effect and its answer. */
  int midDelivery() {
    return midDelivery;
  }

  private String claimedBy(String eventId) {
    try (Connection c = DriverManager.getConnection(outboxUrl); PreparedStatement s = c.prepareStatement(
        "SELECT claimed_by FROM " + FaultWorker.OUTBOX_TABLE + " WHERE event_id = ?")) {
      s.setString(1, eventId);
      try (ResultSet r = s.executeQuery()) {
        return r.next() ? r.getString(1) : null;
      }
    } catch (SQLException e) {
      return null;
    }
  }
}
