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
 */
public record History(int trials, List<Attempt> attempts, List<Accepted> accepted, Set<String> quarantined,
    Map<String, AgentMetrics> agentMetrics, Map<String, Long> fenceRejections, long pgCounter,
    Map<String, Set<Long>> grants) {

  /** Without the agents' grants: the own-token rule is not applied. */
  public History(int trials, List<Attempt> attempts, List<Accepted> accepted, Set<String> quarantined,
      Map<String, AgentMetrics> agentMetrics, Map<String, Long> fenceRejections, long pgCounter) {
    this(trials, attempts, accepted, quarantined, agentMetrics, fenceRejections, pgCounter, Map.of());
  }

  /** The resources (and worker channels) a write goes through. */
  public static final List<String> RESOURCES = List.of("pg", "mariadb", "http", "kafka");

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
   * One attempted write: {@code writeId} is {@code <worker>:<seq>}, unique across the run; {@code state} and
   * {@code tokenSeen} are what the worker's agent reported at the start of its iteration; {@code tokenHeld} the
   * highest token its agent had been granted when the outcome was printed (0: none, or not known).
   */
  public record Attempt(String writeId, String worker, String channel, long startMs, long endMs, String state,
      long tokenSeen, Outcome outcome, String detail, long tokenHeld) {

    /** Without the token held. */
    public Attempt(String writeId, String worker, String channel, long startMs, long endMs, String state,
        long tokenSeen, Outcome outcome, String detail) {
      this(writeId, worker, channel, startMs, endMs, state, tokenSeen, outcome, detail, 0);
    }
  }

  /**
   * A write a resource accepted: {@code order} is its commit order in that resource, {@code token} the token it
   * accepted, {@code atMs} the resource's own clock when it took the write (epoch ms; informational, the checker's
   * real-time rule uses the workers' acknowledgements).
   */
  public record Accepted(String resource, long order, String writeId, long token, long atMs) {
  }

  /** The agent's counters of one worker incarnation, per agent channel (jdbc, http, kafka). */
  public record AgentMetrics(Map<String, Long> blocked, Map<String, Long> rejected) {
  }

  /** The one lock every worker contends for; every write and every accepted row belongs to it. */
  public static final String LOCK = "faults";

  /** The agent's channel label for a resource. */
  public static String agentChannel(String resource) {
    return resource.equals("pg") || resource.equals("mariadb") ? "jdbc" : resource;
  }
}
