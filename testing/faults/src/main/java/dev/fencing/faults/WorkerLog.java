package dev.fencing.faults;

import dev.fencing.faults.History.AgentMetrics;
import dev.fencing.faults.History.Attempt;
import dev.fencing.faults.History.Outcome;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads what a {@link FaultWorker} printed (its {@code ATTEMPT}/{@code OUTCOME} lines, among the agent's own log
 * lines) and what its agent's {@code /metrics} said, into the checker's terms.
 */
public final class WorkerLog {
  private static final Pattern SERIES = Pattern.compile("^([a-z_]+)\\{([^}]*)\\}\\s+([0-9.eE+-]+)$");
  private static final Pattern LABEL = Pattern.compile("([a-z_]+)=\"([^\"]*)\"");
  /** The agent's line when it takes the lock with a valid grant (LeaseKeeper). */
  private static final Pattern GRANT = Pattern.compile("holding lock '([^']*)' with fencing token (\\d+)");

  private WorkerLog() {
  }

  /**
   * The attempts in one worker's output, in the order it made them; an attempt without an outcome line is NONE. Each
   * carries the highest token of its lock the agent's log had announced ({@link #grants}) when its outcome was
   * printed. The lock is the ATTEMPT line's seventh field ({@value History#LOCK} when there is none).
   */
  public static List<Attempt> parse(String output) {
    Map<String, String[]> open = new LinkedHashMap<>();
    List<Attempt> attempts = new ArrayList<>();
    Map<String, Long> held = new java.util.HashMap<>();
    for (String line : output.split("\n")) {
      Matcher grant = GRANT.matcher(line);
      if (grant.find()) {
        long token = parseLong(grant.group(2));
        held.merge(grant.group(1), token, Math::max);
      } else if (line.startsWith("ATTEMPT ")) {
        String[] f = line.split(" ");
        if (f.length >= 6) {
          open.put(f[2] + " " + f[3], f);
        }
      } else if (line.startsWith("OUTCOME ")) {
        String[] f = line.split(" ", 5);
        String[] a = f.length == 5 ? open.remove(f[2] + " " + f[3]) : null;
        if (a != null) {
          attempts.add(attempt(a, Long.parseLong(f[1]), classify(f[4]), f[4], held));
        }
      }
    }
    for (String[] a : open.values()) {
      attempts.add(attempt(a, -1, Outcome.NONE, "", held));
    }
    return attempts;
  }

  /**
   * Every token the worker's agent was granted and took (its {@code holding lock '<lock>' with fencing token N}
   * lines; a reused grant is given up, not taken). A write of this worker that a resource accepted must carry one of
   * them: any other token is another session's.
   */
  public static Set<Long> grants(String output) {
    Set<Long> tokens = new TreeSet<>();
    grantsByLock(output).values().forEach(tokens::addAll);
    return tokens;
  }

  /** {@link #grants}, per lock. */
  public static Map<String, Set<Long>> grantsByLock(String output) {
    Map<String, Set<Long>> tokens = new TreeMap<>();
    Matcher m = GRANT.matcher(output);
    while (m.find()) {
      tokens.computeIfAbsent(m.group(1), l -> new TreeSet<>()).add(parseLong(m.group(2)));
    }
    return tokens;
  }

  private static Attempt attempt(String[] a, long endMs, Outcome outcome, String detail, Map<String, Long> held) {
    String id = a[2];
    String worker = id.substring(0, Math.max(0, id.lastIndexOf(':')));
    String lock = a.length > 6 ? a[6] : History.LOCK;
    return new Attempt(id, worker, a[3], Long.parseLong(a[1]), endMs, a[4], parseLong(a[5]), outcome, detail,
        held.getOrDefault(lock, 0L), lock);
  }

  /**
   * What a raw result means: OK is an acknowledgement; FN001/FN002 and 409 are fence rejections; FN003 and the
   * agent's FencingBlockedException (the cause of Kafka's KafkaException, or the HTTP client's IOException) are
   * blocks; anything else leaves the write's fate open.
   */
  public static Outcome classify(String result) {
    if (result.equals("OK")) {
      return Outcome.ACKED;
    }
    if (result.startsWith("SQLSTATE FN003")) {
      return Outcome.BLOCKED;
    }
    if (result.startsWith("SQLSTATE FN001") || result.startsWith("SQLSTATE FN002") || result.startsWith("HTTP 409")) {
      return Outcome.REJECTED;
    }
    if (result.startsWith("EXC ")) {
      int end = result.indexOf(' ', 4);
      String classes = end < 0 ? result.substring(4) : result.substring(4, end);
      if (classes.contains("dev.fencing.agent.bootstrap.FencingBlockedException")) {
        return Outcome.BLOCKED;
      }
    }
    return Outcome.FAILED;
  }

  /**
   * The agent's {@code fencing_side_effects_total{outcome="blocked"}} and {@code fencing_rejections_total}, summed
   * per channel, from its Prometheus text.
   */
  public static AgentMetrics metrics(String prometheusText) {
    Map<String, Long> blocked = new TreeMap<>();
    Map<String, Long> rejected = new TreeMap<>();
    for (String line : prometheusText.split("\n")) {
      Matcher m = SERIES.matcher(line.strip());
      if (!m.matches()) {
        continue;
      }
      Map<String, String> labels = new LinkedHashMap<>();
      Matcher l = LABEL.matcher(m.group(2));
      while (l.find()) {
        labels.put(l.group(1), l.group(2));
      }
      long value = (long) Double.parseDouble(m.group(3));
      String channel = labels.getOrDefault("channel", "");
      if (m.group(1).equals("fencing_side_effects_total") && "blocked".equals(labels.get("outcome"))) {
        blocked.merge(channel, value, Long::sum);
      } else if (m.group(1).equals("fencing_rejections_total")) {
        rejected.merge(channel, value, Long::sum);
      }
    }
    return new AgentMetrics(blocked, rejected);
  }

  private static long parseLong(String s) {
    try {
      return Long.parseLong(s.strip());
    } catch (NumberFormatException e) {
      return 0;
    }
  }
}
