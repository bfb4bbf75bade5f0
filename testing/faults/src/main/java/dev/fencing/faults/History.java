package dev.fencing.faults;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Everything a fault run recorded, as the checker reads it: the workers' attempts (their own word), the writes each
 * resource accepted in its commit order (the resource's word), the records the Kafka consumer fence quarantined, and
 * the counters scraped from each agent and each fence.
 *
 * @param trials          how many trials (one fault each) the run made
 * @param attempts        every attempted write, from the workers' logs
 * @param accepted        every write a resource accepted, with the token it accepted, in each resource's commit order
 * @param quarantined     write ids the Kafka consumer fence refused (dead-lettered): rejected at the resource
 * @param agentMetrics    per worker incarnation, the agent's counters at the end of its life
 * @param fenceRejections per resource ({@code http}, {@code kafka}), the fence's own rejection counter
 * @param pgCounter       the PostgreSQL counter every accepted pg write incremented in the same transaction (-1: none)
 * @param grants          per worker incarnation, every token its agent was granted (its "holding lock" log lines);
 *                        an incarnation missing here is not judged by the own-token rule
 * @param unfenced        every write that reached an unfenced destination ({@link #UNFENCED}), in each destination's
 *                        arrival order, with the token it carried (0: none)
 * @param wipes           when each coordinator wipe began (epoch ms, the workers' clock): tokens start low again
 *                        after one, so the unfenced destinations order holders by (wipes before the grant, token)
 */
public record History(int trials, List<Attempt> attempts, List<Accepted> accepted, Set<String> quarantined,
    Map<String, AgentMetrics> agentMetrics, Map<String, Long> fenceRejections, long pgCounter,
    Map<String, Set<Long>> grants, List<Accepted> unfenced, List<Long> wipes) {

  /** Without unfenced destinations. */
  public History(int trials, List<Attempt> attempts, List<Accepted> accepted, Set<String> quarantined,
      Map<String, AgentMetrics> agentMetrics, Map<String, Long> fenceRejections, long pgCounter,
      Map<String, Set<Long>> grants) {
    this(trials, attempts, accepted, quarantined, agentMetrics, fenceRejections, pgCounter, grants, List.of(),
        List.of());
  }

  /** Without the agents' grants: the own-token rule is not applied. */
  public History(int trials, List<Attempt> attempts, List<Accepted> accepted, Set<String> quarantined,
      Map<String, AgentMetrics> agentMetrics, Map<String, Long> fenceRejections, long pgCounter) {
    this(trials, attempts, accepted, quarantined, agentMetrics, fenceRejections, pgCounter, Map.of());
  }

  /** The fenced resources (and worker channels) a write goes through. */
  public static final List<String> RESOURCES = List.of("pg", "mariadb", "http", "kafka");

  /**
   * The unfenced destinations (and worker channels): a PostgreSQL table without a fence trigger, an HTTP receiver
   * without the fence's filter, a Kafka topic not in the agent's {@code fenced.kafka} read without the consumer
   * fence. Only the agent stands between a stale holder and them.
   */
  public static final List<String> UNFENCED = List.of("pg-unfenced", "http-unfenced", "kafka-unfenced");

  /** What the worker saw of one attempted write. */
  public enum Outcome {
    /** The resource acknowledged it (commit returned, 200, broker ack): it must not be lost. */
    ACKED,
    /** A fence refused it (SQLSTATE FN001/FN002, HTTP 409). */
    REJECTED,
    /** The agent stopped it before it left the JVM (FN003, FencingBlockedException). */
    BLOCKED,
    /** Any other error (timeout, broken connection): the write may or may not have happened. */
    FAILED,
    /** No outcome line: the worker ended during the call. */
    NONE
  }

  /**
   * One attempted write: {@code writeId} is {@code <worker>:<seq>} ({@code <worker>:<seq>/<lock>} with several
   * locks), unique across the run; {@code state} and {@code tokenSeen} are what the worker's agent reported for the
   * write's lock at the start of its iteration; {@code tokenHeld} the highest token of that lock its agent had been
   * granted when the outcome was printed (0: none, or not known); {@code lock} the lock the write was made under.
   */
  public record Attempt(String writeId, String worker, String channel, long startMs, long endMs, String state,
      long tokenSeen, Outcome outcome, String detail, long tokenHeld, String lock) {

    /** Under the one lock {@link #LOCK}. */
    public Attempt(String writeId, String worker, String channel, long startMs, long endMs, String state,
        long tokenSeen, Outcome outcome, String detail, long tokenHeld) {
      this(writeId, worker, channel, startMs, endMs, state, tokenSeen, outcome, detail, tokenHeld, LOCK);
    }

    /** Without the token held. */
    public Attempt(String writeId, String worker, String channel, long startMs, long endMs, String state,
        long tokenSeen, Outcome outcome, String detail) {
      this(writeId, worker, channel, startMs, endMs, state, tokenSeen, outcome, detail, 0);
    }
  }

  /**
   * A write a resource accepted: {@code order} is its commit order in that resource (Kafka: in its partition),
   * {@code token} the token it accepted, {@code atMs} the resource's own clock when it took the write (epoch ms;
   * informational, the checker's real-time rule uses the workers' acknowledgements), {@code lock} the lock it was
   * accepted under, {@code partition} the Kafka partition (-1 for the other resources).
   */
  public record Accepted(String resource, long order, String writeId, long token, long atMs, String lock,
      int partition) {

    /** Under the one lock {@link #LOCK}, no partition. */
    public Accepted(String resource, long order, String writeId, long token, long atMs) {
      this(resource, order, writeId, token, atMs, LOCK, -1);
    }

    /**
     * What the checker judges on its own: the resource, per lock (each lock has its own tables and fence record),
     * per Kafka partition (offsets order records only within a partition): {@code pg}, {@code kafka/p2},
     * {@code mariadb/faults-2}, {@code kafka/faults-1/p0}.
     */
    public String stream() {
      return resource + (LOCK.equals(lock) ? "" : "/" + lock) + (partition < 0 ? "" : "/p" + partition);
    }
  }

  /** The agent's counters of one worker incarnation, per agent channel (jdbc, http, kafka). */
  public record AgentMetrics(Map<String, Long> blocked, Map<String, Long> rejected) {
  }

  /** The lock every worker contends for with one lock (the default); with several, its {@code -1}, {@code -2}... */
  public static final String LOCK = "faults";

  /** The agent's channel label for a resource. */
  public static String agentChannel(String resource) {
    String r = resource.endsWith("-unfenced") ? resource.substring(0, resource.length() - 9) : resource;
    return r.equals("pg") || r.equals("mariadb") ? "jdbc" : r;
  }
}
