package dev.fencing.agent.instrumentation.api;

import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Decision;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * Every destination the JVM's side effects went to, per lock: JDBC tables (by database), HTTP hosts, Kafka topics;
 * whether each is fenced, unfenced or exempt, and how its side effects were decided. The source of {@code /status}
 * {@code inventory} and of {@code fencing_destinations}.
 *
 * <p>Built for the hot path: an entry is made on a destination's first side effect only (the one allocation); the
 * hooks keep it on what they already resolved once per destination (a prepared statement, a constant SQL text, a
 * host's answer, a topic's answer), so a later side effect finds its entry without a lookup, and its lock's counts
 * with one reference comparison ({@link Destination#of}); counts are {@link LongAdder}s. Bounded: at most
 * {@link #maxDestinations()} destinations ({@code fencing.inventory.max-destinations}); side effects toward any
 * further one are counted in {@link #overflow()} only.
 */
public final class DestinationInventory {
  public static final int DEFAULT_MAX_DESTINATIONS = 500;
  /** The bounds of {@code fencing.inventory.max-destinations}. */
  public static final int MIN_MAX_DESTINATIONS = 1;
  public static final int MAX_MAX_DESTINATIONS = 100_000;
  /** Table slots per database (open addressing): beyond it, further tables of that database count as overflow. */
  static final int TABLE_SLOTS = 256;
  /** SQL texts remembered per database ({@link Database#bySql}). */
  static final int SQL_TEXTS = 1024;
  /** The table entry of JDBC writes with no single target table (DDL, CALL, multi-table and multi-statement texts). */
  public static final String NO_SINGLE_TABLE = "(no single table)";
  /** The table entry of a database that is exempt, or declared fenced, as a whole. */
  public static final String EVERY_TABLE = "*";
  /** lastSeen's resolution: the coarse clock advances this often, and lastSeen is written at most this often. */
  private static final long LAST_SEEN_GRANULARITY_MS = 1000;

  /** The {@code status} of a destination. */
  public enum Status {
    FENCED("fenced"),
    UNFENCED("unfenced"),
    EXEMPT("exempt");

    private final String label;

    Status(String label) {
      this.label = label;
    }

    public String label() {
      return label;
    }
  }

  /** One destination: a table of a database, an HTTP scheme://host:port, a Kafka topic. */
  public static final class Destination {
    private final Channel channel;
    /** JDBC: the database's URL without credentials; HTTP: scheme://host:port; Kafka: the topic. */
    private final String address;
    /** JDBC: the table as the database resolves it, {@link #NO_SINGLE_TABLE} or {@link #EVERY_TABLE}; else null. */
    private final String table;
    /** The raw key of a table entry: the SQL text's schema and name as written (compared, never shown). */
    private final String rawSchema;
    private final String rawName;
    private final String scheme;
    private final int port;
    /** HTTP: the host as the hook was first given it (compared, never shown). */
    private String rawHost;
    /** JDBC: the plain statement's SQL text remembered for it first ({@link Database#bySql}). */
    private volatile String sqlText;
    private volatile boolean seenFenced;
    private volatile boolean seenUnfenced;
    private volatile boolean seenExempt;
    private volatile PerLock[] locks = new PerLock[0];
    /** The lock whose side effects came here last: the usual case (one lock per JVM) is one reference comparison. */
    private volatile PerLock last;
    /** JDBC: the database it belongs to. */
    private Database database;

    Destination(Channel channel, String address, String table, String rawSchema, String rawName, String scheme,
        int port) {
      this.channel = channel;
      this.address = address;
      this.table = table;
      this.rawSchema = rawSchema;
      this.rawName = rawName;
      this.scheme = scheme;
      this.port = port;
    }

    public Channel channel() {
      return channel;
    }

    public String address() {
      return address;
    }

    public String table() {
      return table;
    }

    /** JDBC: the JDBC driver's jar file, when known; else null. */
    public String driverJar() {
      return database == null ? null : database.driverJar;
    }

    /** Exempt when matched by fencing.exempt.*; else unfenced when any side effect went there unjudged. */
    public Status status() {
      return seenExempt ? Status.EXEMPT : seenUnfenced || !seenFenced ? Status.UNFENCED : Status.FENCED;
    }

    /** The locks whose side effects went here, with their counts. */
    public List<PerLock> locks() {
      return List.of(locks);
    }

    /** {@code lock}'s counts here, made on its first side effect here. */
    public PerLock of(String lock) {
      PerLock p = last;
      if (p != null && p.lock == lock) {
        return p;
      }
      return find(lock);
    }

    /** {@code lock}'s counts here when a side effect of it came here before; else null (never adds one). */
    PerLock existing(String lock) {
      for (PerLock p : locks) {
        if (p.lock.equals(lock)) {
          return p;
        }
      }
      return null;
    }

    private PerLock find(String lock) {
      PerLock[] a = locks;
      for (PerLock p : a) {
        if (p.lock == lock) {
          last = p;
          return p;
        }
      }
      for (PerLock p : a) {
        if (p.lock.equals(lock)) {
          last = p;
          return p;
        }
      }
      PerLock p = add(lock);
      last = p;
      return p;
    }

    private synchronized PerLock add(String lock) {
      PerLock known = existing(lock); // another thread may have added it since find's scan
      if (known != null) {
        return known;
      }
      PerLock[] a = locks;
      PerLock p = new PerLock(lock);
      PerLock[] b = java.util.Arrays.copyOf(a, a.length + 1);
      b[a.length] = p;
      locks = b;
      return p;
    }
  }

  /** What one lock's side effects did toward one destination. */
  public static final class PerLock {
    private final String lock;
    private final LongAdder tagged = new LongAdder();
    private final LongAdder passed = new LongAdder();
    private final LongAdder wouldBlock = new LongAdder();
    private final LongAdder blocked = new LongAdder();
    private final LongAdder exempt = new LongAdder();
    private final LongAdder rejections = new LongAdder();
    private final LongAdder blockedCommits = new LongAdder();
    private final LongAdder failedBatches = new LongAdder();
    private final LongAdder failedRecords = new LongAdder();
    /** Writes passed because the calling code matched a caller exemption rule, per rule (a handful per JVM). */
    private volatile CallerRule[] callerRules = NO_RULES;
    private final long firstSeen = System.currentTimeMillis(); // once, on the lock's first side effect here
    private volatile long lastSeen = firstSeen;
    /** HTTP: a bit per method of {@link #methodNames} used here. */
    private volatile int methods;
    /** HTTP: the method string last noted, so that the same method again costs one reference comparison. */
    private volatile String lastMethod;

    PerLock(String lock) {
      this.lock = lock;
    }

    public String lock() {
      return lock;
    }

    public long tagged() {
      return tagged.sum();
    }

    public long passed() {
      return passed.sum();
    }

    public long wouldBlock() {
      return wouldBlock.sum();
    }

    public long blocked() {
      return blocked.sum();
    }

    public long exempt() {
      return exempt.sum();
    }

    public long rejections() {
      return rejections.sum();
    }

    /** Commits of transactions that wrote here, blocked (rolled back) by the agent after the lease's deadline. */
    public long blockedCommits() {
      return blockedCommits.sum();
    }

    /** Producer batches toward here failed by the agent: their records were tagged under a grant that expired. */
    public long failedBatches() {
      return failedBatches.sum();
    }

    /** The records of {@link #failedBatches()}. */
    public long failedRecords() {
      return failedRecords.sum();
    }

    /** Writes passed because their calling code matched a caller exemption rule: the rule and its count. */
    public java.util.Map<String, Long> exemptByCaller() {
      java.util.Map<String, Long> m = new java.util.LinkedHashMap<>();
      for (CallerRule r : callerRules) {
        m.put(r.rule, r.count.sum());
      }
      return m;
    }

    /** The agent blocked the commit of a transaction that wrote here. */
    public void commitBlocked() {
      blockedCommits.increment();
    }

    /** The agent failed a producer batch of {@code records} records sent here. */
    public void batchFailed(int records) {
      failedBatches.increment();
      failedRecords.add(Math.max(0, records));
    }

    void exemptByCaller(String rule) {
      CallerRule[] a = callerRules;
      for (CallerRule r : a) {
        if (r.rule == rule) {
          r.count.increment();
          return;
        }
      }
      addRule(rule).count.increment();
    }

    private synchronized CallerRule addRule(String rule) {
      CallerRule[] a = callerRules;
      for (CallerRule r : a) {
        if (r.rule.equals(rule)) {
          return r;
        }
      }
      CallerRule r = new CallerRule(rule);
      CallerRule[] b = java.util.Arrays.copyOf(a, a.length + 1);
      b[a.length] = r;
      callerRules = b;
      return r;
    }

    public long firstSeenMillis() {
      return firstSeen;
    }

    public long lastSeenMillis() {
      return lastSeen;
    }

    /** A fence refused a side effect of this lock sent here. */
    public void rejected() {
      rejections.increment();
    }

    void seen() {
      long now = coarseMillis;
      if (now > lastSeen) {
        lastSeen = now;
      }
    }
  }

  private static final CallerRule[] NO_RULES = new CallerRule[0];

  /** A caller exemption rule (a package prefix) and how many writes it passed. */
  private static final class CallerRule {
    final String rule;
    final LongAdder count = new LongAdder();

    CallerRule(String rule) {
      this.rule = rule;
    }
  }

  /** One database (one JDBC URL): its tables, found by the SQL text's target span without allocation. */
  public final class Database {
    private final String url;
    /** The JDBC driver's jar, for the report's {@code sql install --driver-jar}; null when not a plain file. */
    private final String driverJar;
    private final AtomicReferenceArray<Destination> tables = new AtomicReferenceArray<>(TABLE_SLOTS);
    private volatile Destination noSingleTable;
    private volatile Destination everyTable;
    /**
     * Destinations by the plain statement's SQL text, so that a text met before (a constant, as most are) costs its
     * cached hash and an identity check instead of a scan for its target. Bounded: beyond it, texts are scanned.
     */
    private final ConcurrentHashMap<String, Destination> bySql = new ConcurrentHashMap<>();
    /** The destination {@link #bySql} answered last: the same constant text again is one reference comparison. */
    private volatile Destination lastBySql;

    /** The destination found for {@code sql} before; null when not remembered. */
    public Destination bySql(String sql) {
      if (sql == null) {
        return null;
      }
      Destination last = lastBySql;
      if (last != null && last.sqlText == sql) {
        return last;
      }
      Destination d = bySql.get(sql);
      if (d != null && d.sqlText == sql) {
        lastBySql = d;
      }
      return d;
    }

    /** Remembers {@code d} as the destination of {@code sql} (up to {@link #SQL_TEXTS} texts per database). */
    public void rememberSql(String sql, Destination d) {
      if (sql != null && d != null && bySql.size() < SQL_TEXTS) {
        if (bySql.putIfAbsent(sql, d) == null && d.sqlText == null) {
          d.sqlText = sql;
        }
      }
    }

    Database(String url, String driverJar) {
      this.url = url;
      this.driverJar = driverJar;
    }

    public String url() {
      return url;
    }

    public String driverJar() {
      return driverJar;
    }

    /** Writes with no single target table; null beyond the cap. */
    public Destination noSingleTable() {
      Destination d = noSingleTable;
      if (d == null) {
        d = special(NO_SINGLE_TABLE);
      }
      return d;
    }

    /** The database as a whole (exempt, or declared fenced); null beyond the cap. */
    public Destination everyTable() {
      Destination d = everyTable;
      if (d == null) {
        d = special(EVERY_TABLE);
      }
      return d;
    }

    private synchronized Destination special(String which) {
      Destination d = which == EVERY_TABLE ? everyTable : noSingleTable;
      if (d == null && reserve()) {
        d = register(new Destination(Channel.JDBC, url, which, "", which, null, -1));
        d.database = this;
        if (which == EVERY_TABLE) {
          everyTable = d;
        } else {
          noSingleTable = d;
        }
      }
      return d;
    }

    /**
     * The table at {@code [nameStart, nameEnd)} of {@code sql}, qualified by {@code [schemaStart, schemaEnd)} (empty:
     * unqualified); {@code foldLower}/{@code foldUpper}: the database folds unquoted names so (shown folded). Null
     * beyond the cap.
     */
    public Destination table(String sql, int nameStart, int nameEnd, int schemaStart, int schemaEnd,
        boolean foldSchema, boolean foldName, boolean upper) {
      int h = hash(sql, schemaStart, schemaEnd) * 31 + hash(sql, nameStart, nameEnd);
      int mask = TABLE_SLOTS - 1;
      for (int probe = 0; probe < TABLE_SLOTS; probe++) {
        int i = (h + probe) & mask;
        Destination d = tables.get(i);
        if (d == null) {
          Destination made = make(sql, nameStart, nameEnd, schemaStart, schemaEnd, foldSchema, foldName, upper);
          if (made == null) {
            return null;
          }
          if (tables.compareAndSet(i, null, made)) {
            return register(made);
          }
          release();
          d = tables.get(i);
        }
        if (same(d, sql, nameStart, nameEnd, schemaStart, schemaEnd)) {
          return d;
        }
      }
      overflow.increment();
      return null;
    }

    private Destination make(String sql, int nameStart, int nameEnd, int schemaStart, int schemaEnd,
        boolean foldSchema, boolean foldName, boolean upper) {
      if (!reserve()) {
        return null;
      }
      String rawSchema = schemaEnd > schemaStart ? sql.substring(schemaStart, schemaEnd) : "";
      String rawName = sql.substring(nameStart, nameEnd);
      String shown = (rawSchema.isEmpty() ? "" : fold(rawSchema, foldSchema, upper) + ".")
          + fold(rawName, foldName, upper);
      Destination d = new Destination(Channel.JDBC, url, shown, rawSchema, rawName, null, -1);
      d.database = this;
      return d;
    }

    private boolean same(Destination d, String sql, int nameStart, int nameEnd, int schemaStart, int schemaEnd) {
      int nl = nameEnd - nameStart;
      int sl = schemaEnd - schemaStart;
      return d.rawName.length() == nl && d.rawSchema.length() == Math.max(0, sl)
          && sql.regionMatches(nameStart, d.rawName, 0, nl)
          && (sl <= 0 || sql.regionMatches(schemaStart, d.rawSchema, 0, sl));
    }
  }

  private static String fold(String s, boolean fold, boolean upper) {
    return !fold ? s : upper ? s.toUpperCase(Locale.ROOT) : s.toLowerCase(Locale.ROOT);
  }

  private static int hash(String s, int from, int to) {
    int h = 0;
    for (int i = from; i < to; i++) {
      h = 31 * h + s.charAt(i);
    }
    return h ^ (h >>> 16);
  }

  private final int maxDestinations;
  private final AtomicInteger size = new AtomicInteger();
  private final LongAdder overflow = new LongAdder();
  private final ConcurrentLinkedQueue<Destination> all = new ConcurrentLinkedQueue<>();
  private final ConcurrentHashMap<String, Destination> topics = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Destination[]> hosts = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Database> databases = new ConcurrentHashMap<>();
  /** The HTTP destination {@link #http} answered last: the same host again costs no lookup. */
  private volatile Destination lastHttp;
  /** HTTP methods seen, by bit of {@link PerLock#methods}; copied on a new method (a handful per JVM). */
  private volatile String[] methodNames = new String[0];

  public DestinationInventory() {
    this(DEFAULT_MAX_DESTINATIONS);
  }

  /** {@code maxDestinations}: the cap, from {@link #MIN_MAX_DESTINATIONS} to {@link #MAX_MAX_DESTINATIONS}. */
  public DestinationInventory(int maxDestinations) {
    if (maxDestinations < MIN_MAX_DESTINATIONS || maxDestinations > MAX_MAX_DESTINATIONS) {
      throw new IllegalArgumentException("maxDestinations " + maxDestinations + ": expected " + MIN_MAX_DESTINATIONS
          + " to " + MAX_MAX_DESTINATIONS);
    }
    this.maxDestinations = maxDestinations;
  }

  public int maxDestinations() {
    return maxDestinations;
  }

  /** Side effects toward destinations beyond the cap: counted here, not per destination. */
  public long overflow() {
    return overflow.sum();
  }

  private boolean reserve() {
    for (;;) {
      int n = size.get();
      if (n >= maxDestinations) {
        overflow.increment();
        return false;
      }
      if (size.compareAndSet(n, n + 1)) {
        return true;
      }
    }
  }

  private void release() {
    size.decrementAndGet();
  }

  private Destination register(Destination d) {
    Clock.start();
    all.add(d);
    return d;
  }

  /**
   * The time lastSeen takes, to the second: read by the hooks without a clock call of their own (a clock read is a
   * system call on some virtual machines), advanced by one daemon thread, started with the first destination.
   */
  private static volatile long coarseMillis = System.currentTimeMillis();

  private static final class Clock {
    private static final java.util.concurrent.atomic.AtomicBoolean STARTED =
        new java.util.concurrent.atomic.AtomicBoolean();

    static void start() {
      if (STARTED.get() || !STARTED.compareAndSet(false, true)) {
        return;
      }
      coarseMillis = System.currentTimeMillis();
      Thread t = new Thread(() -> {
        for (;;) {
          coarseMillis = System.currentTimeMillis();
          try {
            Thread.sleep(LAST_SEEN_GRANULARITY_MS);
          } catch (InterruptedException e) {
            return;
          }
        }
      }, "fencing-agent-inventory-clock");
      t.setDaemon(true);
      t.setContextClassLoader(null); // started on an application thread: keep none of its class loaders alive
      t.start();
    }
  }

  /** A Kafka topic; null beyond the cap. One lock-free lookup once seen. */
  public Destination kafka(String topic) {
    if (topic == null) {
      return null;
    }
    Destination d = topics.get(topic);
    if (d == null) {
      d = newTopic(topic);
    }
    return d;
  }

  private synchronized Destination newTopic(String topic) {
    Destination d = topics.get(topic);
    if (d == null && reserve()) {
      d = register(new Destination(Channel.KAFKA, topic, null, null, null, null, -1));
      topics.put(topic, d);
    }
    return d;
  }

  /** An HTTP destination; {@code port} -1: the scheme's default. Null beyond the cap. */
  public Destination http(String scheme, String host, int port) {
    if (host == null) {
      return null;
    }
    String s = scheme == null ? "http" : scheme;
    int p = port >= 0 ? port : defaultPort(s);
    Destination last = lastHttp;
    if (last != null && last.port == p && last.rawHost.equals(host) && last.scheme.equalsIgnoreCase(s)) {
      return last; // equals and equalsIgnoreCase answer an identical string by one reference comparison
    }
    Destination found = knownHost(s, host, p);
    if (found == null) {
      found = newHost(s, host, p);
    }
    if (found != null && found.rawHost.equals(host)) {
      lastHttp = found;
    }
    return found;
  }

  /**
   * {@code lock}'s counts toward the HTTP destination {@code scheme://host:port} ({@code port} -1: the scheme's
   * default), when a side effect of that lock went there before; else null. Never adds a destination or a lock: for
   * attributing what comes back (a fence's refusal) to what was sent.
   */
  public PerLock knownHttp(String scheme, String host, int port, String lock) {
    if (host == null || lock == null) {
      return null;
    }
    String s = scheme == null ? "http" : scheme;
    Destination d = knownHost(s, host, port >= 0 ? port : defaultPort(s));
    return d == null ? null : d.existing(lock);
  }

  /** The HTTP destination registered for (scheme, host, port); null when there is none yet. */
  private Destination knownHost(String scheme, String host, int port) {
    Destination[] a = hosts.get(host);
    if (a != null) {
      for (Destination d : a) {
        if (d.port == port && d.scheme.equalsIgnoreCase(scheme)) {
          return d;
        }
      }
    }
    return null;
  }

  /** The port a URL of {@code scheme} without one means: 443 for https, else 80. */
  private static int defaultPort(String scheme) {
    return "https".equalsIgnoreCase(scheme) ? 443 : 80;
  }

  private synchronized Destination newHost(String scheme, String host, int port) {
    Destination[] a = hosts.get(host);
    if (a != null) {
      for (Destination d : a) {
        if (d.port == port && d.scheme.equalsIgnoreCase(scheme)) {
          return d;
        }
      }
    }
    if (!reserve()) {
      return null;
    }
    String s = scheme.toLowerCase(Locale.ROOT);
    Destination d = register(new Destination(Channel.HTTP, s + "://" + host.toLowerCase(Locale.ROOT) + ":" + port,
        null, null, null, s, port));
    d.rawHost = host;
    Destination[] b = a == null ? new Destination[1] : java.util.Arrays.copyOf(a, a.length + 1);
    b[b.length - 1] = d;
    hosts.put(host, b);
    return d;
  }

  /**
   * The database behind a JDBC URL (looked up once per connection, not per statement); never null. {@code driver}:
   * the driver's connection class, whose jar the report names.
   */
  public Database database(String url, Class<?> driver) {
    String key = url == null ? "(unknown)" : url;
    return databases.computeIfAbsent(key, k -> new Database(redact(k), jarOf(driver)));
  }

  private static String jarOf(Class<?> type) {
    try {
      java.security.CodeSource cs = type == null ? null : type.getProtectionDomain().getCodeSource();
      java.net.URL location = cs == null ? null : cs.getLocation();
      if (location != null && "file".equals(location.getProtocol()) && location.getPath().endsWith(".jar")) {
        return java.nio.file.Path.of(location.toURI()).toString();
      }
    } catch (Exception | LinkageError e) {
      // no jar to name: the report asks for one
    }
    return null;
  }

  /**
   * A side effect's decision toward {@code d} (null: beyond the cap, counted as overflow already). Returns the lock's
   * counts, to attribute a fence's rejection of it later. Allocation-free once the destination and lock were seen.
   */
  public PerLock record(Destination d, boolean fenced, Decision decision) {
    if (d == null || decision == null) {
      return null;
    }
    if (fenced) {
      if (!d.seenFenced) {
        d.seenFenced = true;
      }
    } else if (!d.seenUnfenced) {
      d.seenUnfenced = true;
    }
    PerLock p = d.of(decision.lock());
    if (decision.observed()) {
      p.wouldBlock.increment();
    } else if (decision.isBlock()) {
      p.blocked.increment();
    } else if (decision.isTag()) {
      p.tagged.increment();
    } else if (decision.exemptCaller() != null) {
      p.exemptByCaller(decision.exemptCaller());
    } else {
      p.passed.increment();
    }
    p.seen();
    return p;
  }

  /** A side effect toward an exempt destination (fencing.exempt.*), under {@code lock}. */
  public PerLock recordExempt(Destination d, String lock) {
    if (d == null) {
      return null;
    }
    if (!d.seenExempt) {
      d.seenExempt = true;
    }
    PerLock p = d.of(lock);
    p.exempt.increment();
    p.seen();
    return p;
  }

  /** An HTTP method used toward a destination by a lock. */
  public void method(PerLock p, String method) {
    if (p == null || method == null || p.lastMethod == method) {
      return;
    }
    String[] names = methodNames;
    int bit = -1;
    for (int i = 0; i < names.length; i++) {
      if (names[i] == method || names[i].equals(method)) {
        bit = i;
        break;
      }
    }
    if (bit < 0) {
      bit = methodBit(method);
      if (bit < 0) {
        return;
      }
    }
    int m = p.methods;
    if ((m & (1 << bit)) == 0) {
      synchronized (p) {
        p.methods |= 1 << bit;
      }
    }
    p.lastMethod = method; // after its bit: a reader that sees it sees the bit
  }

  private synchronized int methodBit(String method) {
    String[] names = methodNames;
    for (int i = 0; i < names.length; i++) {
      if (names[i].equals(method)) {
        return i;
      }
    }
    if (names.length >= 32) {
      return -1;
    }
    String[] b = java.util.Arrays.copyOf(names, names.length + 1);
    b[names.length] = method;
    methodNames = b;
    return names.length;
  }

  /** The HTTP methods a lock used toward a destination, upper case, sorted. */
  public List<String> methods(PerLock p) {
    String[] names = methodNames;
    java.util.TreeSet<String> out = new java.util.TreeSet<>();
    for (int i = 0; i < names.length; i++) {
      if ((p.methods & (1 << i)) != 0) {
        out.add(names[i].toUpperCase(Locale.ROOT));
      }
    }
    return new ArrayList<>(out);
  }

  /** Every destination seen, in the order first seen. */
  public List<Destination> destinations() {
    return new ArrayList<>(all);
  }

  /** How many destinations of {@code channel} with {@code status} {@code lock}'s side effects went to. */
  public long count(String lock, Channel channel, Status status) {
    long n = 0;
    for (Destination d : all) {
      if (d.channel == channel && d.status() == status) {
        for (PerLock p : d.locks) {
          if (p.lock.equals(lock)) {
            n++;
            break;
          }
        }
      }
    }
    return n;
  }

  /**
   * A JDBC URL without what may be a secret: user info before {@code @} and every parameter whose name contains
   * {@code password}, {@code secret} or {@code token}, or ends with {@code key} (dropped, with its value).
   */
  public static String redact(String url) {
    String u = url;
    int scheme = u.indexOf("//");
    if (scheme >= 0) {
      int slash = u.indexOf('/', scheme + 2);
      int at = u.indexOf('@', scheme + 2);
      if (at > 0 && (slash < 0 || at < slash)) {
        u = u.substring(0, scheme + 2) + u.substring(at + 1);
      }
    }
    StringBuilder out = new StringBuilder(u.length());
    int i = 0;
    int n = u.length();
    int paramStart = indexOfAny(u, "?;", 0);
    if (paramStart < 0) {
      return u;
    }
    out.append(u, 0, paramStart);
    i = paramStart;
    boolean first = true;
    while (i < n) {
      char sep = u.charAt(i);
      int end = indexOfAny(u, "&;", i + 1);
      if (end < 0) {
        end = n;
      }
      String param = u.substring(i + 1, end);
      String name = param.contains("=") ? param.substring(0, param.indexOf('=')) : param;
      String lower = name.toLowerCase(Locale.ROOT);
      boolean secret = lower.contains("password") || lower.contains("secret") || lower.contains("token")
          || lower.endsWith("key") || lower.equals("pwd");
      if (!secret && !param.isEmpty()) {
        out.append(first ? (sep == ';' ? ';' : '?') : (sep == ';' ? ';' : '&')).append(param);
        first = false;
      }
      i = end;
    }
    return out.toString();
  }

  private static int indexOfAny(String s, String chars, int from) {
    for (int i = from; i < s.length(); i++) {
      if (chars.indexOf(s.charAt(i)) >= 0) {
        return i;
      }
    }
    return -1;
  }
}
