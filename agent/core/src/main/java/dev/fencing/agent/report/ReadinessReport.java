package dev.fencing.agent.report;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The fencing readiness report: the destinations of an agent's /status {@code inventory}, each with its status and
 * counts, and what to do about each that a lock's side effects reach unfenced (the {@code sql install} command, the
 * HTTP fence or the outbox, the Kafka consumer fence), and which exemptions matched. Plain logic over the parsed
 * document; {@code java -jar fencing-agent.jar report} prints it.
 */
public final class ReadinessReport {
  /** The lock label of side effects outside every lock's scope. */
  public static final String NO_LOCK = "none";
  static final String NO_SINGLE_TABLE = "(no single table)";
  static final String EVERY_TABLE = "*";

  /** One destination as one lock's side effects reached it. */
  public record Row(String lock, String channel, String destination, String table, String status,
      List<String> methods, long tagged, long passed, long wouldBlock, long blocked, long exempt, long rejections,
      String firstSeen, String lastSeen, String driverJar, long blockedCommits, long failedBatches,
      long failedRecords, Map<String, Long> exemptByCaller) {
    public Row(String lock, String channel, String destination, String table, String status, List<String> methods,
        long tagged, long passed, long wouldBlock, long blocked, long exempt, long rejections, String firstSeen,
        String lastSeen, String driverJar) {
      this(lock, channel, destination, table, status, methods, tagged, passed, wouldBlock, blocked, exempt,
          rejections, firstSeen, lastSeen, driverJar, 0, 0, 0, Map.of());
    }

    /** Writes passed because their calling code matched a caller exemption rule, all rules together. */
    public long exemptByCallerTotal() {
      return exemptByCaller.values().stream().mapToLong(Long::longValue).sum();
    }

    /** Side effects of a lock (leader-only work), not those made outside every lock. */
    public boolean underLock() {
      return !NO_LOCK.equals(lock);
    }

    public long sideEffects() {
      return tagged + passed + wouldBlock + blocked + exempt + exemptByCallerTotal();
    }

    /** What the CI gate fails on: a lock's side effect toward an unfenced destination. */
    public boolean leaderOnlyUnfenced() {
      return underLock() && "unfenced".equals(status);
    }

    /** The table or the HTTP methods, for the table's second column. */
    String detail() {
      if ("jdbc".equals(channel)) {
        return table == null ? "" : table;
      }
      return methods.isEmpty() ? "" : String.join(",", methods);
    }
  }

  private final String mode;
  private final long maxDestinations;
  private final long overflow;
  private final List<Row> rows;

  ReadinessReport(String mode, long maxDestinations, long overflow, List<Row> rows) {
    this.mode = mode;
    this.maxDestinations = maxDestinations;
    this.overflow = overflow;
    this.rows = List.copyOf(rows);
  }

  /**
   * Reads a parsed /status document. Throws {@link IllegalArgumentException} naming what is missing when it is not
   * one (another JSON document, or an agent too old to keep an inventory).
   */
  public static ReadinessReport of(Object status) {
    if (!(status instanceof Map)) {
      throw new IllegalArgumentException("not an agent's /status document: expected a JSON object, got "
          + kind(status));
    }
    Object inv = ((Map<?, ?>) status).get("inventory");
    if (!(inv instanceof Map)) {
      throw new IllegalArgumentException("not an agent's /status document with an inventory: no \"inventory\" "
          + "object (expected the JSON of GET /status of a Fencing Agent that keeps one; fields found: "
          + ((Map<?, ?>) status).keySet() + ")");
    }
    Map<?, ?> m = (Map<?, ?>) inv;
    Object list = m.get("destinations");
    if (!(list instanceof List)) {
      throw new IllegalArgumentException("the /status inventory has no \"destinations\" array");
    }
    List<Row> rows = new ArrayList<>();
    int n = 0;
    for (Object o : (List<?>) list) {
      n++;
      if (!(o instanceof Map)) {
        throw new IllegalArgumentException("inventory destination " + n + " is not a JSON object");
      }
      Map<?, ?> d = (Map<?, ?>) o;
      List<String> methods = new ArrayList<>();
      if (d.get("methods") instanceof List) {
        for (Object x : (List<?>) d.get("methods")) {
          methods.add(String.valueOf(x));
        }
      }
      Map<String, Long> byCaller = new java.util.LinkedHashMap<>();
      if (d.get("exemptByCaller") instanceof Map) {
        for (Map.Entry<?, ?> e : ((Map<?, ?>) d.get("exemptByCaller")).entrySet()) {
          if (e.getValue() instanceof Number) {
            byCaller.put(String.valueOf(e.getKey()), ((Number) e.getValue()).longValue());
          }
        }
      }
      rows.add(new Row(text(d, "lock", n), text(d, "channel", n), text(d, "destination", n),
          (String) d.get("table"), text(d, "status", n), List.copyOf(methods), number(d, "tagged"),
          number(d, "passed"), number(d, "wouldBlock"), number(d, "blocked"), number(d, "exempt"),
          number(d, "rejections"), (String) d.get("firstSeen"), (String) d.get("lastSeen"),
          (String) d.get("driverJar"), number(d, "blockedCommits"), number(d, "failedBatches"),
          number(d, "failedRecords"), java.util.Collections.unmodifiableMap(byCaller)));
    }
    return new ReadinessReport(String.valueOf(m.get("mode")), number(m, "maxDestinations"),
        number(m, "overflowTotal"), rows);
  }

  private static String kind(Object o) {
    return o == null ? "null" : o instanceof List ? "an array" : o instanceof String ? "a string" : "a "
        + o.getClass().getSimpleName().toLowerCase(java.util.Locale.ROOT);
  }

  private static String text(Map<?, ?> d, String field, int n) {
    Object v = d.get(field);
    if (!(v instanceof String)) {
      throw new IllegalArgumentException("inventory destination " + n + " has no \"" + field + "\" string");
    }
    return (String) v;
  }

  private static long number(Map<?, ?> d, String field) {
    Object v = d.get(field);
    return v instanceof Number ? ((Number) v).longValue() : 0;
  }

  public List<Row> rows() {
    return rows;
  }

  public String mode() {
    return mode;
  }

  /** The rows the CI gate fails on. */
  public List<Row> leaderOnlyUnfenced() {
    return rows.stream().filter(Row::leaderOnlyUnfenced).toList();
  }

  /** The {@code sql install} command that fences a row's table; null when there is none to suggest. */
  public static String sqlInstall(Row r) {
    if (!"jdbc".equals(r.channel()) || r.table() == null || NO_SINGLE_TABLE.equals(r.table())
        || EVERY_TABLE.equals(r.table()) || !r.underLock()) {
      return null;
    }
    return "java -jar fencing-agent.jar sql install --jdbc-url " + shellQuote(r.destination())
        + (r.driverJar() == null ? "" : " --driver-jar " + shellQuote(r.driverJar())) + " --table " + r.table()
        + " --lock " + shellQuote(r.lock());
  }

  /** What to do about a row; null when nothing (fenced, or outside every lock and not exempt). */
  public static String advice(Row r) {
    if ("exempt".equals(r.status())) {
      return "exempt: " + name(r) + " matched fencing.exempt." + r.channel() + " (" + r.exempt()
          + " side effects sent untagged, never blocked): make sure nothing there needs the lock";
    }
    if (!"unfenced".equals(r.status()) || !r.underLock()) {
      return null;
    }
    String risk = r.blocked() > 0 ? " (" + r.blocked() + " blocked)"
        : r.wouldBlock() > 0 ? " (" + r.wouldBlock() + " would have been blocked in enforce mode)" : "";
    switch (r.channel()) {
      case "jdbc":
        if (NO_SINGLE_TABLE.equals(r.table())) {
          return "lock '" + r.lock() + "' writes to " + r.destination() + " with statements no fence can judge "
              + "(DDL, CALL, multi-table or multi-statement texts)" + risk + ": after the lease ends they are "
              + "blocked; make them single-table writes to fenced tables, or move them out of the lock's work";
        }
        return "unfenced table " + r.table() + " of " + r.destination() + " written under lock '" + r.lock() + "'"
            + risk + ": install the SQL fence: " + sqlInstall(r);
      case "http":
        return "unfenced HTTP service " + r.destination() + " (" + String.join(", ", r.methods())
            + ") called under lock '" + r.lock() + "'" + risk + ": put the HTTP fence (fences/http) in front of it and"
            + " list its host:port in fencing.fenced.http, or send these requests through a tokened outbox "
            + "(sql install --outbox, then outbox relay)";
      case "kafka":
        return "unfenced topic " + r.destination() + " written under lock '" + r.lock() + "'" + risk
            + ": add the Kafka consumer fence (fences/kafka) to its consumers and list the topic in "
            + "fencing.fenced.kafka";
      default:
        return null;
    }
  }

  /**
   * What the agent refused of a row beyond its side effects, as a sentence: blocked commits of transactions that
   * wrote there, producer batches failed in the buffer. Null when none.
   */
  public static String refusedLater(Row r) {
    List<String> parts = new ArrayList<>();
    if (r.blockedCommits() > 0) {
      parts.add(r.blockedCommits() + (r.blockedCommits() == 1 ? " commit" : " commits") + " of transactions that "
          + "wrote there blocked (rolled back) after the lease's deadline");
    }
    if (r.failedBatches() > 0) {
      parts.add(r.failedBatches() + (r.failedBatches() == 1 ? " producer batch" : " producer batches") + " ("
          + r.failedRecords() + (r.failedRecords() == 1 ? " record" : " records") + ") failed in the producer's "
          + "buffer: tagged under a lease that expired before they were sent");
    }
    return parts.isEmpty() ? null : name(r) + ", lock '" + r.lock() + "': " + String.join("; ", parts);
  }

  /** One line per caller exemption rule that passed writes of a row. */
  public static List<String> callerExemptions(Row r) {
    List<String> out = new ArrayList<>();
    for (Map.Entry<String, Long> e : r.exemptByCaller().entrySet()) {
      out.add("exempt by caller rule " + e.getKey() + " (fencing.exempt.callers): " + e.getValue()
          + (e.getValue() == 1 ? " write" : " writes") + " to " + name(r) + " under lock '" + r.lock() + "' passed "
          + "untagged where they would have been blocked: make sure that code needs no lock");
    }
    return out;
  }

  private static String name(Row r) {
    return "jdbc".equals(r.channel()) ? (EVERY_TABLE.equals(r.table()) ? "database " : "table " + r.table() + " of ")
        + r.destination() : r.channel().equals("http") ? "HTTP service " + r.destination() : "topic " + r.destination();
  }

  /** Single quotes for a POSIX shell, only where needed. */
  static String shellQuote(String s) {
    if (s.matches("[A-Za-z0-9_./:=@%+,-]+")) {
      return s;
    }
    return "'" + s.replace("'", "'\\''") + "'";
  }

  /** The report as a table and the list of what to do. */
  public String text() {
    StringBuilder b = new StringBuilder();
    long leaderOnly = leaderOnlyUnfenced().size();
    b.append("Fencing readiness: mode ").append(mode).append(", ").append(rows.size())
        .append(rows.size() == 1 ? " destination" : " destinations").append(" per lock, ").append(leaderOnly)
        .append(" reached unfenced under a lock");
    if (overflow > 0) {
      b.append("; ").append(overflow).append(" side effects went to destinations beyond the cap of ")
          .append(maxDestinations).append(" (not listed)");
    }
    b.append('\n');
    if (rows.isEmpty()) {
      b.append("\nNo side effect seen yet: run the application's leader-only work with the agent attached "
          + "(fencing.mode=observe), then report again.\n");
      return b.toString();
    }
    String[] head = {"LOCK", "CHANNEL", "DESTINATION", "TABLE/METHODS", "STATUS", "TAGGED", "PASSED", "WOULD_BLOCK",
        "BLOCKED", "EXEMPT", "REJECTED", "LAST SEEN"};
    List<String[]> lines = new ArrayList<>();
    lines.add(head);
    for (Row r : rows) {
      lines.add(new String[] {r.lock(), r.channel(), r.destination(), r.detail(), r.status(), n(r.tagged()),
          n(r.passed()), n(r.wouldBlock()), n(r.blocked()), n(r.exempt()), n(r.rejections()),
          r.lastSeen() == null ? "" : r.lastSeen()});
    }
    int[] w = new int[head.length];
    for (String[] l : lines) {
      for (int i = 0; i < l.length; i++) {
        w[i] = Math.max(w[i], l[i].length());
      }
    }
    b.append('\n');
    for (String[] l : lines) {
      StringBuilder line = new StringBuilder();
      for (int i = 0; i < l.length; i++) {
        boolean numeric = i >= 5 && i <= 10;
        String cell = l[i];
        String pad = " ".repeat(w[i] - cell.length());
        line.append(i == 0 ? "" : "  ").append(numeric ? pad + cell : cell + pad);
      }
      b.append(line.toString().stripTrailing()).append('\n');
    }
    List<String> todo = new ArrayList<>();
    List<String> exempt = new ArrayList<>();
    List<String> refused = new ArrayList<>();
    for (Row r : rows) {
      exempt.addAll(callerExemptions(r));
      String later = refusedLater(r);
      if (later != null) {
        refused.add(later);
      }
      String a = advice(r);
      if (a == null) {
        continue;
      }
      if ("exempt".equals(r.status())) {
        exempt.add(a);
      } else {
        todo.add(a);
      }
    }
    b.append('\n');
    if (todo.isEmpty()) {
      b.append("Every destination written under a lock is fenced");
      b.append("observe".equals(mode) ? ": switch to fencing.mode=enforce.\n" : ".\n");
    } else {
      b.append("To do before fencing.mode=enforce protects every leader-only write:\n");
      for (String a : todo) {
        b.append("  - ").append(a).append('\n');
      }
      if (rows.stream().anyMatch(r -> sqlInstall(r) != null && r.leaderOnlyUnfenced())) {
        b.append("  (the URLs are shown without credentials: add --user U --password-file F where the database "
            + "needs them; restart the application afterwards, the agent reads a database's fences once)\n");
      }
    }
    if (!refused.isEmpty()) {
      b.append("Refused after the side effect was sent:\n");
      for (String a : refused) {
        b.append("  - ").append(a).append('\n');
      }
    }
    if (!exempt.isEmpty()) {
      b.append("Exemptions that matched:\n");
      for (String a : exempt) {
        b.append("  - ").append(a).append('\n');
      }
    }
    return b.toString();
  }

  private static String n(long v) {
    return Long.toString(v);
  }

  /** The machine-readable form: every row with its advice and command, and the gate's verdict. */
  public String json() {
    StringBuilder b = new StringBuilder("{\"mode\":");
    JsonText.quote(b, mode);
    b.append(",\"maxDestinations\":").append(maxDestinations).append(",\"overflowTotal\":").append(overflow);
    List<Row> failing = leaderOnlyUnfenced();
    b.append(",\"leaderOnlyUnfenced\":").append(failing.size());
    b.append(",\"ready\":").append(failing.isEmpty());
    b.append(",\"destinations\":[");
    for (int i = 0; i < rows.size(); i++) {
      Row r = rows.get(i);
      b.append(i == 0 ? "{" : ",{").append("\"lock\":");
      JsonText.quote(b, r.lock());
      b.append(",\"channel\":");
      JsonText.quote(b, r.channel());
      b.append(",\"destination\":");
      JsonText.quote(b, r.destination());
      b.append(",\"table\":");
      JsonText.quote(b, r.table());
      b.append(",\"methods\":[");
      for (int k = 0; k < r.methods().size(); k++) {
        b.append(k == 0 ? "" : ",");
        JsonText.quote(b, r.methods().get(k));
      }
      b.append("],\"status\":");
      JsonText.quote(b, r.status());
      b.append(",\"leaderOnlyUnfenced\":").append(r.leaderOnlyUnfenced());
      b.append(",\"tagged\":").append(r.tagged()).append(",\"passed\":").append(r.passed())
          .append(",\"wouldBlock\":").append(r.wouldBlock()).append(",\"blocked\":").append(r.blocked())
          .append(",\"exempt\":").append(r.exempt()).append(",\"rejections\":").append(r.rejections())
          .append(",\"blockedCommits\":").append(r.blockedCommits()).append(",\"failedBatches\":")
          .append(r.failedBatches()).append(",\"failedRecords\":").append(r.failedRecords());
      b.append(",\"exemptByCaller\":{");
      int k2 = 0;
      for (Map.Entry<String, Long> e : r.exemptByCaller().entrySet()) {
        b.append(k2++ == 0 ? "" : ",");
        JsonText.quote(b, e.getKey());
        b.append(':').append(e.getValue());
      }
      b.append('}');
      b.append(",\"firstSeen\":");
      JsonText.quote(b, r.firstSeen());
      b.append(",\"lastSeen\":");
      JsonText.quote(b, r.lastSeen());
      b.append(",\"advice\":");
      JsonText.quote(b, advice(r));
      b.append(",\"command\":");
      JsonText.quote(b, r.leaderOnlyUnfenced() ? sqlInstall(r) : null);
      b.append('}');
    }
    return b.append("]}").toString();
  }
}
