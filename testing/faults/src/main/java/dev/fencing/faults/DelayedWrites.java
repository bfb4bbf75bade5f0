package dev.fencing.faults;

import dev.fencing.faults.History.Accepted;
import dev.fencing.faults.History.Attempt;
import dev.fencing.faults.History.Outcome;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Judges the writes a {@code delay} fault held ({@link DelayFault}): every write of the held worker to the held
 * resource that was in flight while its bytes were held (attempted before the release, not ended before the hold)
 * must be rejected by the fence, or be accepted and ordered before <em>every</em> write the resource accepted under
 * a higher token in the same stream (resource, lock, Kafka partition). Rule 1 of {@link HistoryChecker} says the same of all writes; this names the delayed ones and
 * counts what became of them.
 */
final class DelayedWrites {

  /** The bytes of {@code worker}'s writes to {@code resource} were held from {@code fromMs} to {@code toMs}. */
  record Hold(String worker, String resource, long token, long fromMs, long toMs) {
  }

  /** What became of the delayed writes, and every one ordered after a successor's write. */
  record Verdict(int held, int rejected, int acceptedBefore, int open, List<String> violations) {
    String describe() {
      return "delayed writes (in flight while a delay fault held them): " + held + ", rejected by the fence "
          + rejected + ", accepted before every higher token's write " + acceptedBefore + ", open (not accepted) "
          + open + ", ordered after a higher token's write " + violations.size();
    }
  }

  private DelayedWrites() {
  }

  static Verdict check(List<Hold> holds, History h) {
    Map<String, Accepted> accepted = new HashMap<>();
    Map<String, List<Accepted>> byStream = new HashMap<>();
    for (Accepted row : h.accepted()) {
      accepted.put(row.resource() + " " + row.lock() + " " + row.writeId(), row);
      byStream.computeIfAbsent(row.stream(), r -> new ArrayList<>()).add(row);
    }
    int held = 0;
    int rejected = 0;
    int before = 0;
    int open = 0;
    List<String> violations = new ArrayList<>();
    for (Hold hold : holds) {
      for (Attempt a : h.attempts()) {
        if (!a.worker().equals(hold.worker()) || !a.channel().equals(hold.resource()) || a.startMs() > hold.toMs()
            || (a.endMs() >= 0 && a.endMs() < hold.fromMs())) {
          continue;
        }
        held++;
        Accepted row = accepted.get(a.channel() + " " + a.lock() + " " + a.writeId());
        if (row == null) {
          boolean fenced = a.outcome() == Outcome.REJECTED
              || (a.channel().equals("kafka") && h.quarantined().contains(a.writeId()));
          if (fenced) {
            rejected++;
          } else {
            open++;
          }
          continue;
        }
        // Commit order is per stream: per lock (its own tables and fence record) and Kafka partition.
        Accepted later = byStream.get(row.stream()).stream()
            .filter(r -> r.token() > row.token() && r.order() < row.order()).findFirst().orElse(null);
        if (later == null) {
          before++;
        } else {
          violations.add("delayed write accepted after a successor's: " + a.channel() + " write " + a.writeId()
              + " (token " + row.token() + ", held " + hold.fromMs() + "-" + hold.toMs() + ") committed at order "
              + row.order() + ", after " + later.writeId() + " with token " + later.token() + " (order "
              + later.order() + ")");
        }
      }
    }
    return new Verdict(held, rejected, before, open, List.copyOf(violations));
  }
}
