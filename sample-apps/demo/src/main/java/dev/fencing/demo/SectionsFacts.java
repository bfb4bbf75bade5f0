package dev.fencing.demo;

import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Everything the sections story ({@code --sections}) produced: the moments and tokens the orchestrator observed
 * (epoch milliseconds), the refusal the frozen run met, the rows of {@code settlement_run} and {@code orders}, what
 * the order load's requests came to, and the counters before the freeze and at the end.
 */
record SectionsFacts(
    long tokenA,
    long tokenB,
    long aHoldingAt,
    long bStandbyAt,
    long bothUpAt,
    long freezeAt,
    long takeoverAt,
    long resumeAt,
    long endAt,
    Replica.Lock aWoke,
    Replica.Lock finalA,
    Replica.Lock finalB,
    Refusal refusal,
    long lastRunBeforeFreeze,
    List<String> replicaStarts,
    List<Run> runs,
    Map<String, Orders> orders,
    List<OrderLoad.Request> requests,
    MetricsSnapshot before,
    MetricsSnapshot after) {

  static final String REPLICA_A = "replica-a";
  static final String REPLICA_B = "replica-b";
  static final String SKIPPED = "fencing_section_skipped_total";

  /** One row of {@code settlement_run}: one run of the job; {@code token} -1 when the write carried none. */
  record Run(long id, String replica, long token, long startedAt) {}

  /** The rows of {@code orders} one replica wrote, and how many of them carried a token. */
  record Orders(long rows, long tagged) {}

  /** How the frozen run's write was refused when it woke: the SQLSTATE and the line of the log that says so. */
  record Refusal(String sqlState, long at, String line) {
    private static final Pattern STATE = Pattern.compile("\\b(FN001|FN003|25P03)\\b");

    /** The first refusal in {@code log} (the replica's output since it resumed), or null. */
    static Refusal find(String log, long at) {
      for (String line : log.split("\n")) {
        Matcher m = STATE.matcher(line);
        if (m.find()) {
          String text = line.strip();
          return new Refusal(m.group(1), at, text.length() > 240 ? text.substring(0, 240) + " ..." : text);
        }
      }
      return null;
    }

    /** What refused it, in words. */
    String meaning() {
      return switch (sqlState) {
        case "FN001" -> "the SQL fence on settlement_run: its token is below the fence's";
        case "FN003" -> "replica-a's agent, before the write left the JVM: it no longer holds the lock";
        case "25P03" -> "PostgreSQL had ended the run's transaction, idle for longer than the agent allows on a fenced"
            + " database (fencing.jdbc.idle-in-transaction-timeout, one TTL), so it never held replica-b back";
        default -> sqlState;
      };
    }
  }

  List<Run> runsOf(String replica) {
    return runs.stream().filter(r -> r.replica().equals(replica)).toList();
  }

  /** Runs of replica-a written after it was frozen (its frozen run, or a later one): there must be none. */
  List<Run> aRunsAfterFreeze() {
    return runsOf(REPLICA_A).stream().filter(r -> r.id() > lastRunBeforeFreeze).toList();
  }

  /** The load's requests to {@code replica} sent in [from, to). */
  List<OrderLoad.Request> requests(String replica, long from, long to) {
    return requests.stream().filter(r -> r.replica().equals(replica) && r.at() >= from && r.at() < to).toList();
  }

  long okRequests(String replica) {
    return requests.stream().filter(r -> r.replica().equals(replica) && r.ok()).count();
  }

  List<OrderLoad.Request> failedRequests() {
    return requests.stream().filter(r -> !r.ok()).toList();
  }

  /** Runs of the job {@code replica}'s agent skipped, counted before the freeze. */
  long skippedBefore(String replica) {
    return Math.round(before.value(replica, SKIPPED, "lock", Replica.LOCK));
  }

  /** Runs of the job {@code replica}'s agent skipped between the freeze and the end. */
  long skippedSince(String replica) {
    return Math.round(after.value(replica, SKIPPED, "lock", Replica.LOCK) - skippedBefore(replica));
  }
}
