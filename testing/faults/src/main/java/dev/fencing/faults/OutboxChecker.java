package dev.fencing.faults;

import dev.fencing.faults.History.Accepted;
import dev.fencing.faults.History.Attempt;
import dev.fencing.faults.History.Outcome;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Judges the outbox of a {@code --work=outbox} run, after the final drain, against the business rows: each
 * {@code pg} transaction wrote a {@code pg_write} row and two events ({@code <write id>/http},
 * {@code <write id>/kafka}), so an event's transaction committed exactly when its write's row is there. With
 * {@code --db=mariadb} the same holds for each {@code mariadb} transaction and its {@code maria_write} row.
 * <ol>
 *   <li><b>No stale event</b>: every delivered event's transaction committed (its {@code pg_write} row exists), under
 *       the token the delivery carried, and that token was valid: the row is not a stale accept of {@code pg} (a
 *       token below one the fence had already admitted, in the fence's admission order), and its writer did not see
 *       the transaction refused or blocked. An event row without its business row, or a delivery of an event the
 *       table does not have, counts too.</li>
 *   <li><b>Every committed event delivered</b>: each committed transaction's two events are in the table, delivered
 *       (none pending or parked), and applied at their receiver.</li>
 *   <li><b>Each event applied once</b>: the receivers' effect table has at most one row per event id, however many
 *       times it was delivered.</li>
 * </ol>
 */
final class OutboxChecker {
  static final List<String> CHANNELS = List.of("http", "kafka");

  /** An event row of the outbox table at the end of the run. */
  record Event(String eventId, String writeId, String channel, long token, String state, String lastError) {
  }

  /** The outbox's counts and violations; {@code stale} and {@code lost} join the run's. */
  record Result(long events, long deliveries, long duplicates, long applied, long stale, long lost,
      long appliedTwice, List<String> violations) {
    /** What the summary line adds. */
    String summary() {
      return " outbox_events=" + events + " outbox_deliveries=" + deliveries + " outbox_duplicates=" + duplicates
          + " outbox_applied=" + applied + " outbox_stale=" + stale + " outbox_lost=" + lost
          + " outbox_applied_twice=" + appliedTwice;
    }
  }

  private OutboxChecker() {
  }

  /** The write an event belongs to: its id without the {@code /<channel>} suffix. */
  static String writeIdOf(String eventId) {
    int slash = eventId.lastIndexOf('/');
    return slash < 0 ? eventId : eventId.substring(0, slash);
  }

  /**
   * @param events      the outbox table's rows
   * @param committed   the {@code pg_write} rows (resource {@code pg}), in any order
   * @param deliveries  what the receivers got, every delivery
   * @param applied     per event id, the receivers' effect rows
   * @param attempts    the workers' attempts (the {@code pg} ones are the transactions that wrote events)
   */
  static Result check(List<Event> events, List<Accepted> committed, List<OutboxReceiver.Delivery> deliveries,
      Map<String, Integer> applied, List<Attempt> attempts) {
    return check(events, committed, deliveries, applied, attempts, "pg");
  }

  /**
   * As above, for the outbox in the database of {@code resource} ({@code pg}, {@code mariadb}): {@code committed}
   * are that database's business rows, and its attempts are the transactions that wrote events.
   */
  static Result check(List<Event> events, List<Accepted> committed, List<OutboxReceiver.Delivery> deliveries,
      Map<String, Integer> applied, List<Attempt> attempts, String resource) {
    String rowTable = resource.equals("pg") ? "pg_write" : "maria_write";
    List<String> violations = new ArrayList<>();
    Map<String, Accepted> rowOf = new HashMap<>();
    Set<String> staleRows = new HashSet<>();
    List<Accepted> rows = new ArrayList<>(committed);
    rows.sort(Comparator.comparingLong(Accepted::order));
    long highest = 0;
    for (Accepted row : rows) {
      rowOf.put(row.writeId(), row);
      if (row.token() < highest) {
        staleRows.add(row.writeId());
      }
      highest = Math.max(highest, row.token());
    }
    Map<String, Attempt> pgAttempts = new HashMap<>();
    for (Attempt a : attempts) {
      if (a.channel().equals(resource)) {
        pgAttempts.put(a.writeId(), a);
      }
    }
    Map<String, Event> eventOf = new HashMap<>();
    for (Event e : events) {
      eventOf.put(e.eventId(), e);
    }

    Set<String> stale = new TreeSet<>();
    for (OutboxReceiver.Delivery d : deliveries) {
      String writeId = writeIdOf(d.eventId());
      Accepted row = rowOf.get(writeId);
      Attempt a = pgAttempts.get(writeId);
      Event e = eventOf.get(d.eventId());
      String reason = null;
      if (row == null) {
        reason = "its transaction did not commit (no " + rowTable + " row " + writeId + ")";
      } else if (d.token() != row.token()) {
        reason = "its transaction committed under token " + row.token();
      } else if (staleRows.contains(writeId)) {
        reason = "its transaction's " + rowTable + " row is a stale accept (token " + row.token() + " admitted after a"
            + " higher one)";
      } else if (a != null && (a.outcome() == Outcome.REJECTED || a.outcome() == Outcome.BLOCKED)) {
        reason = "its writer saw the transaction " + a.outcome() + " (" + a.detail() + ")";
      } else if (e == null) {
        reason = "the outbox table has no such event";
      }
      if (reason != null && stale.add(d.eventId())) {
        violations.add("outbox stale event: " + d.eventId() + " delivered over " + d.channel() + " with token "
            + d.token() + ", but " + reason);
      }
      if (e != null && !e.channel().equals(d.channel())) {
        violations.add("outbox event " + d.eventId() + " of channel " + e.channel() + " arrived over " + d.channel());
      }
    }
    for (Event e : events) {
      if (!rowOf.containsKey(e.writeId()) && stale.add(e.eventId())) {
        violations.add("outbox stale event: " + e.eventId() + " (token " + e.token() + ", " + e.state() + ") is in"
            + " the outbox table, but its transaction's " + rowTable + " row " + e.writeId() + " is not");
      }
    }

    long lost = 0;
    for (Accepted row : rows) {
      for (String channel : CHANNELS) {
        if (!eventOf.containsKey(row.writeId() + "/" + channel)) {
          lost++;
          violations.add("outbox lost: the committed transaction " + row.writeId() + " (token " + row.token()
              + ") has no " + channel + " event in the outbox table");
        }
      }
    }
    for (Event e : events) {
      if (!e.state().equals("delivered")) {
        lost++;
        violations.add("outbox lost: " + e.eventId() + " is still " + e.state() + " after the drain"
            + (e.lastError() == null ? "" : " (" + e.lastError() + ")"));
      } else if (rowOf.containsKey(e.writeId()) && !applied.containsKey(e.eventId())) {
        lost++;
        violations.add("outbox lost: " + e.eventId() + " is marked delivered but its receiver never applied it");
      }
    }

    long appliedRows = 0;
    long twice = 0;
    for (Map.Entry<String, Integer> a : applied.entrySet()) {
      appliedRows += a.getValue();
      if (a.getValue() > 1) {
        twice++;
        violations.add("outbox applied twice: " + a.getKey() + " was applied " + a.getValue() + " times");
      }
    }
    long distinct = deliveries.stream().map(OutboxReceiver.Delivery::eventId).distinct().count();
    return new Result(events.size(), deliveries.size(), deliveries.size() - distinct, appliedRows, stale.size(),
        lost, twice, List.copyOf(violations));
  }
}
