package dev.fencing.faults;

import dev.fencing.faults.History.Accepted;
import dev.fencing.faults.History.AgentMetrics;
import dev.fencing.faults.History.Attempt;
import dev.fencing.faults.History.Outcome;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * Judges a fault run's {@link History}, per resource, lock and Kafka partition ({@link Accepted#stream()}: each lock
 * has its own tables and fence records, and a partition's offsets order only its own records):
 * <ol>
 *   <li>accepted tokens never decrease in the resource's commit order;</li>
 *   <li>no write is accepted if it was attempted after a write with a higher token had been acknowledged by the same
 *       resource (real time: the acknowledgement was printed before the attempt started);</li>
 *   <li>every blocked or rejected write appears in the metrics: per agent and channel the agent's counters are at
 *       least what its worker saw, per fence its rejection counter at least the rejections the resource made;</li>
 *   <li>nothing acknowledged as written is lost: every ACKED write is among the resource's accepted writes (Kafka:
 *       accepted or quarantined by the consumer fence), and the PostgreSQL counter matches the accepted rows;</li>
 *   <li>a write is accepted under its writer's own token: one its agent was granted (when the history has the
 *       grants); a token above every one its writer held by then counts as a stale accept.</li>
 * </ol>
 * Also flagged: a write accepted although its worker saw it rejected or blocked, or accepted twice, or accepted
 * without any attempt. Writes whose outcome is open (FAILED, NONE) may or may not be accepted.
 *
 * <p>The unfenced destinations ({@link History#UNFENCED}) have no fence to judge a token, so rule 6 judges them by
 * arrival order, per destination and lock: no write of a holder may arrive after the first arrival of a write of a
 * later holder. Holders are ordered by their token within one coordinator history: a wipe starts the tokens low
 * again, so a holder's place is (the wipes before it was first seen holding that token, the token). Every arrival
 * must carry a token (an untagged write means the lock's scope did not reach it). Rules 4 and the checks above apply
 * to them too; rules 1, 2, 3 (fence counters) and 5 do not.
 */
public final class HistoryChecker {

  /** The verdict: the counts of the summary line and every violation, described. */
  public record Result(int trials, long staleAccepted, long lost, long blocked, long rejected, long unfencedStale,
      long unfencedWrites, List<String> violations) {
    /**
     * {@code trials=N stale_accepted=S lost=L blocked=B rejected=R unfenced_stale=U unfenced_writes=W}: {@code S} of
     * the fenced resources, {@code U} writes that reached an unfenced destination after a later holder's first (or
     * untagged), {@code W} the writes the unfenced destinations received.
     */
    public String summary() {
      return "trials=" + trials + " stale_accepted=" + staleAccepted + " lost=" + lost + " blocked=" + blocked
          + " rejected=" + rejected + " unfenced_stale=" + unfencedStale + " unfenced_writes=" + unfencedWrites;
    }

    /** The same verdict with more violations (the faults' own). */
    public Result with(List<String> more) {
      List<String> all = new ArrayList<>(violations);
      all.addAll(more);
      return new Result(trials, staleAccepted, lost, blocked, rejected, unfencedStale, unfencedWrites,
          List.copyOf(all));
    }

    public boolean ok() {
      return violations.isEmpty();
    }
  }

  private HistoryChecker() {
  }

  public static Result check(History h) {
    List<String> violations = new ArrayList<>();
    Map<String, Attempt> attempts = new HashMap<>();
    for (Attempt a : h.attempts()) {
      attempts.put(a.channel() + " " + a.writeId(), a);
    }
    Map<String, List<Accepted>> byResource = h.accepted().stream()
        .collect(Collectors.groupingBy(Accepted::stream, TreeMap::new, Collectors.toList()));

    long stale = 0;
    for (Map.Entry<String, List<Accepted>> e : byResource.entrySet()) {
      Set<String> staleIds = new LinkedHashSet<>();
      List<Accepted> rows = new ArrayList<>(e.getValue());
      rows.sort(Comparator.comparingLong(Accepted::order));
      long highest = 0;
      Accepted highestRow = null;
      for (Accepted row : rows) {
        if (row.token() < highest) {
          staleIds.add(row.writeId());
          violations.add("stale accept in " + e.getKey() + ": " + row.writeId() + " with token " + row.token()
              + " committed (order " + row.order() + ") after " + highestRow.writeId() + " with token " + highest
              + " (order " + highestRow.order() + ")");
        } else {
          highest = row.token();
          highestRow = row;
        }
      }
      staleIds.addAll(acceptedAfterHigherAck(e.getKey(), rows, attempts, violations));
      staleIds.addAll(acceptedUnderAnotherToken(e.getKey(), rows, attempts, h.grants(), violations));
      staleIds.addAll(acceptedUnderAnotherLock(e.getKey(), rows, attempts, violations));
      stale += staleIds.size();
    }

    long unfencedStale = unfencedOrder(h, attempts, violations);

    long lost = 0;
    Map<String, Set<String>> acceptedIds = new HashMap<>();
    List<Accepted> arrived = new ArrayList<>(h.accepted());
    arrived.addAll(h.unfenced());
    for (Accepted row : arrived) {
      if (!acceptedIds.computeIfAbsent(row.resource(), r -> new HashSet<>()).add(row.writeId())) {
        violations.add("accepted twice in " + row.resource() + ": " + row.writeId());
      }
      Attempt a = attempts.get(row.resource() + " " + row.writeId());
      if (a == null) {
        violations.add("accepted in " + row.resource() + " without any attempt: " + row.writeId());
      } else if (a.outcome() == Outcome.REJECTED || a.outcome() == Outcome.BLOCKED) {
        violations.add("accepted in " + row.resource() + " although the worker saw it " + a.outcome() + ": "
            + row.writeId() + " (" + a.detail() + ")");
      }
    }
    for (Attempt a : h.attempts()) {
      if (a.outcome() != Outcome.ACKED) {
        continue;
      }
      boolean present = acceptedIds.getOrDefault(a.channel(), Set.of()).contains(a.writeId())
          || (a.channel().equals("kafka") && h.quarantined().contains(a.writeId()));
      if (!present) {
        lost++;
        violations.add("lost: " + a.channel() + " write " + a.writeId() + " was acknowledged at " + a.endMs()
            + " but the resource does not have it");
      }
    }
    long pgRows = acceptedIds.getOrDefault("pg", Set.of()).size();
    if (h.pgCounter() >= 0 && h.pgCounter() != pgRows) {
      lost += Math.abs(h.pgCounter() - pgRows);
      violations.add("pg counter is " + h.pgCounter() + " but " + pgRows + " pg rows were accepted: the UPDATE and"
          + " the INSERT of one transaction did not commit together");
    }

    long blocked = h.attempts().stream().filter(a -> a.outcome() == Outcome.BLOCKED).count();
    long rejected = h.attempts().stream().filter(a -> a.outcome() == Outcome.REJECTED).count()
        + h.quarantined().size();
    checkMetrics(h, violations);
    return new Result(h.trials(), stale, lost, blocked, rejected, unfencedStale, h.unfenced().size(),
        List.copyOf(violations));
  }

  /**
   * Rule 6, the unfenced destinations: per destination and lock (the lock the write was made under), in arrival
   * order, each arrival's holder must not precede the latest holder already arrived. A holder is the writer's
   * incarnation and the token the write carried; its place is (wipes before the holder was first seen, token),
   * where first seen is the earliest attempt of that incarnation whose ATTEMPT line showed it holding that token,
   * when the write's own ATTEMPT line showed that token (else the write's own attempt). Returns the writes that
   * arrived out of order or untagged.
   */
  private static long unfencedOrder(History h, Map<String, Attempt> attempts, List<String> violations) {
    Map<String, Long> firstSeen = new HashMap<>();
    for (Attempt a : h.attempts()) {
      if ("HOLDING".equals(a.state()) && a.tokenSeen() > 0) {
        firstSeen.merge(a.worker() + " " + a.lock() + " " + a.tokenSeen(), a.startMs(), Math::min);
      }
    }
    List<Long> wipes = h.wipes().stream().sorted().toList();
    record Arrival(Accepted row, Attempt attempt, long generation) {
    }
    Map<String, List<Arrival>> streams = new TreeMap<>();
    for (Accepted row : h.unfenced()) {
      Attempt a = attempts.get(row.resource() + " " + row.writeId());
      if (a == null) {
        continue; // "without any attempt", below
      }
      // A token the writer was not seen holding when it began the write was granted around the write itself (the
      // same number can come from an earlier history of the coordinator, before a wipe).
      long seen = a.tokenSeen() != row.token() ? a.startMs()
          : firstSeen.getOrDefault(a.worker() + " " + a.lock() + " " + row.token(), a.startMs());
      long generation = wipes.stream().filter(w -> w < seen).count();
      String stream = row.resource() + (History.LOCK.equals(a.lock()) ? "" : "/" + a.lock());
      streams.computeIfAbsent(stream, s -> new ArrayList<>()).add(new Arrival(row, a, generation));
    }
    long found = 0;
    for (Map.Entry<String, List<Arrival>> e : streams.entrySet()) {
      List<Arrival> rows = new ArrayList<>(e.getValue());
      rows.sort(Comparator.comparingLong(r -> r.row().order()));
      Arrival latest = null;
      for (Arrival r : rows) {
        if (r.row().token() <= 0) {
          found++;
          violations.add("untagged write in " + e.getKey() + ": " + r.row().writeId() + " arrived (order "
              + r.row().order() + ") without a token; its writer saw " + r.attempt().state() + " "
              + r.attempt().tokenSeen());
        } else if (latest != null && (r.generation() < latest.generation() || (r.generation() == latest.generation()
            && r.row().token() < latest.row().token()))) {
          found++;
          violations.add("unfenced stale write in " + e.getKey() + ": " + r.row().writeId() + " with token "
              + r.row().token() + " (attempted " + r.attempt().startMs() + "-" + r.attempt().endMs() + ", outcome "
              + r.attempt().outcome() + ") arrived (order " + r.row().order() + ") after " + latest.row().writeId()
              + " with token " + latest.row().token() + " (order " + latest.row().order() + ")"
              + (r.generation() != latest.generation() ? ", a holder after coordinator wipe " + latest.generation()
              : ""));
        } else if (latest == null || r.generation() > latest.generation() || r.row().token() > latest.row().token()) {
          latest = r;
        }
      }
    }
    return found;
  }

  /**
   * Rule 2: a write attempted after a higher-token write to the same resource was acknowledged must not be accepted.
   * Acknowledgements sorted by time, a running maximum of their tokens, one pass over the attempts by start time.
   */
  private static Set<String> acceptedAfterHigherAck(String resource, List<Accepted> rows,
      Map<String, Attempt> attempts, List<String> violations) {
    record Timed(Accepted row, Attempt attempt) {
    }
    List<Timed> timed = new ArrayList<>();
    for (Accepted row : rows) {
      Attempt a = attempts.get(row.resource() + " " + row.writeId());
      if (a != null) {
        timed.add(new Timed(row, a));
      }
    }
    List<Timed> acks = timed.stream().filter(t -> t.attempt().outcome() == Outcome.ACKED)
        .sorted(Comparator.comparingLong(t -> t.attempt().endMs())).toList();
    List<Timed> starts = timed.stream().sorted(Comparator.comparingLong(t -> t.attempt().startMs())).toList();
    Set<String> found = new LinkedHashSet<>();
    int next = 0;
    Timed highest = null;
    for (Timed w : starts) {
      while (next < acks.size() && acks.get(next).attempt().endMs() < w.attempt().startMs()) {
        Timed ack = acks.get(next++);
        if (highest == null || ack.row().token() > highest.row().token()) {
          highest = ack;
        }
      }
      if (highest != null && w.row().token() < highest.row().token()) {
        found.add(w.row().writeId());
        violations.add("stale accept in " + resource + ": " + w.row().writeId() + " with token " + w.row().token()
            + " attempted at " + w.attempt().startMs() + ", after " + highest.row().writeId() + " with token "
            + highest.row().token() + " was acknowledged at " + highest.attempt().endMs());
      }
    }
    return found;
  }

  /**
   * Rule 5: a resource accepts a write under its writer's own token. The token a resource records comes from its
   * side (the session setting, the header), so a write that met a database session still carrying another
   * client's pair (a session shared through a transaction pooler) would pass rules 1 and 2 with a token its writer
   * never held. Such a write is a violation; when the borrowed token is above every token its writer had been
   * granted by then, the fence admitted a stale write as a current one, and it counts as stale.
   */
  private static Set<String> acceptedUnderAnotherToken(String resource, List<Accepted> rows,
      Map<String, Attempt> attempts, Map<String, Set<Long>> grants, List<String> violations) {
    Set<String> found = new LinkedHashSet<>();
    for (Accepted row : rows) {
      Attempt a = attempts.get(row.resource() + " " + row.writeId());
      Set<Long> own = a == null ? null : grants.getOrDefault(a.worker() + "@" + a.lock(), grants.get(a.worker()));
      if (own == null || own.contains(row.token())) {
        continue;
      }
      if (row.token() > a.tokenHeld()) {
        found.add(row.writeId());
        violations.add("stale accept in " + resource + ": " + row.writeId() + " accepted (order " + row.order()
            + ") with token " + row.token() + ", but its writer " + a.worker() + " held token " + a.tokenHeld()
            + " at most (its agent's grants: " + own + "; it saw " + a.state() + " " + a.tokenSeen()
            + "): the resource took another session's newer token for it");
      } else {
        violations.add("foreign token in " + resource + ": " + row.writeId() + " accepted (order " + row.order()
            + ") with token " + row.token() + ", which its writer " + a.worker() + " was never granted (its"
            + " agent's grants: " + own + "; it held " + a.tokenHeld() + ")");
      }
    }
    return found;
  }

  /**
   * With several locks: a write is accepted under the lock it was made under (the lock of its section), not under
   * another lock's record; a write accepted under another lock counts as stale (its token was judged against the
   * wrong lock's history).
   */
  private static Set<String> acceptedUnderAnotherLock(String resource, List<Accepted> rows,
      Map<String, Attempt> attempts, List<String> violations) {
    Set<String> found = new LinkedHashSet<>();
    for (Accepted row : rows) {
      Attempt a = attempts.get(row.resource() + " " + row.writeId());
      if (a != null && !a.lock().equals(row.lock())) {
        found.add(row.writeId());
        violations.add("wrong lock in " + resource + ": " + row.writeId() + " was made under lock '" + a.lock()
            + "' but accepted (order " + row.order() + ") under lock '" + row.lock() + "' with token " + row.token());
      }
    }
    return found;
  }

  /** Rule 3: what the workers saw blocked and rejected, and what the fences rejected, is in the counters. */
  private static void checkMetrics(History h, List<String> violations) {
    Map<String, List<Attempt>> byWorker = h.attempts().stream()
        .collect(Collectors.groupingBy(Attempt::worker, TreeMap::new, Collectors.toList()));
    for (Map.Entry<String, List<Attempt>> e : byWorker.entrySet()) {
      AgentMetrics m = h.agentMetrics().get(e.getKey());
      if (m == null) {
        violations.add("no metrics were scraped from " + e.getKey() + "'s agent");
        continue;
      }
      Map<String, Long> blocked = new TreeMap<>();
      Map<String, Long> rejected = new TreeMap<>();
      for (Attempt a : e.getValue()) {
        if (a.outcome() == Outcome.BLOCKED) {
          blocked.merge(History.agentChannel(a.channel()), 1L, Long::sum);
        } else if (a.outcome() == Outcome.REJECTED) {
          rejected.merge(History.agentChannel(a.channel()), 1L, Long::sum);
        }
      }
      blocked.forEach((channel, seen) -> {
        long counted = m.blocked().getOrDefault(channel, 0L);
        if (counted < seen) {
          violations.add("missing metric: " + e.getKey() + " saw " + seen + " blocked " + channel + " writes, its"
              + " agent counted fencing_side_effects_total{channel=\"" + channel + "\",outcome=\"blocked\"} "
              + counted);
        }
      });
      rejected.forEach((channel, seen) -> {
        long counted = m.rejected().getOrDefault(channel, 0L);
        if (counted < seen) {
          violations.add("missing metric: " + e.getKey() + " saw " + seen + " rejected " + channel + " writes, its"
              + " agent counted fencing_rejections_total{channel=\"" + channel + "\"} " + counted);
        }
      });
    }
    long httpRejected = h.attempts().stream()
        .filter(a -> a.channel().equals("http") && a.outcome() == Outcome.REJECTED).count();
    fenceCounter(h, "http", httpRejected, violations);
    fenceCounter(h, "kafka", h.quarantined().size(), violations);
  }

  private static void fenceCounter(History h, String fence, long seen, List<String> violations) {
    long counted = h.fenceRejections().getOrDefault(fence, 0L);
    if (counted < seen) {
      violations.add("missing metric: the " + fence + " fence rejected " + seen + " writes, its"
          + " fencing_fence_rejections_total{fence=\"" + fence + "\"} is " + counted);
    }
  }
}
