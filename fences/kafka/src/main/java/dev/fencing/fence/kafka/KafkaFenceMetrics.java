package dev.fencing.fence.kafka;

import dev.fencing.protocol.Rejection;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Predicate;

/**
 * The Kafka fence's counters, one set per JVM: Kafka creates the interceptors, so the application has no handle on
 * them, and several consumers of one lock must add up to one series (the same labels).
 * <ul>
 *   <li>{@code fencing_fence_rejections_total{fence="kafka",lock,reason}} (docs/DESIGN.md section 7): records the fence
 *       quarantined, {@code reason} one of {@link #REASONS};</li>
 *   <li>{@code fencing_fence_dead_letters_total{fence="kafka",lock,outcome}}: quarantined records the dead-letter
 *       topic acknowledged ({@code sent}) or that could not be sent ({@code failed}, i.e. lost);</li>
 *   <li>{@code fencing_fence_store_failures_total{fence="kafka"}}: fence store calls that failed; each made the poll
 *       wait and ask again (no record is decided without the store);</li>
 *   <li>{@code fencing_fence_duplicates_skipped_total{fence="kafka",lock}}: later copies of an outbox event the
 *       outbox rule skipped (each time one was read).</li>
 * </ul>
 * Every configured lock starts with all its series at 0. The lock label is a guarded lock's name, or {@value
 * #UNKNOWN_LOCK} for a record naming none of several guarded locks (as in the HTTP fence): never a producer's value.
 * Exposed as Prometheus text ({@link #prometheusText()}) and, when the application has Micrometer, through {@link
 * KafkaFenceMeterBinder} (Micrometer names {@code fencing.fence.rejections}, ...; each registry renders its own style).
 * This class itself needs no metrics library.
 */
public final class KafkaFenceMetrics {

  public static final String REJECTIONS = "fencing_fence_rejections_total";
  public static final String DEAD_LETTERS = "fencing_fence_dead_letters_total";
  public static final String STORE_FAILURES = "fencing_fence_store_failures_total";
  public static final String DUPLICATES = "fencing_fence_duplicates_skipped_total";
  public static final String FENCE = "kafka";
  public static final String UNKNOWN_LOCK = "(unknown)";
  /** The reasons this fence gives (the HTTP fence's, less its drain timeout). */
  public static final List<Rejection> REASONS = List.of(Rejection.STALE_TOKEN, Rejection.MISSING_TOKEN,
      Rejection.MALFORMED_TOKEN, Rejection.UNKNOWN_LOCK, Rejection.STORE_UNAVAILABLE, Rejection.MISSING_SIGNATURE,
      Rejection.BAD_SIGNATURE, Rejection.REPLAYED_TOKEN);
  public static final List<String> OUTCOMES = List.of("sent", "failed");

  private static final KafkaFenceMetrics GLOBAL = new KafkaFenceMetrics();

  /** One series: metric name (with _total), labels and value. */
  public record Sample(String name, String lock, String label, long value) {
  }

  private static final class Counters {
    final LongAdder[] rejections = adders(Rejection.values().length);
    final LongAdder[] deadLetters = adders(OUTCOMES.size());
    final LongAdder duplicates = new LongAdder();
  }

  private final Map<String, Counters> counters = new ConcurrentHashMap<>();
  private final LongAdder storeFailures = new LongAdder();
  /** Told about each lock label that gets series (a consumer configured later); false from one: remove it. */
  private final List<Predicate<String>> lockListeners = new CopyOnWriteArrayList<>();

  KafkaFenceMetrics() {
  }

  /** The counters of every fencing consumer in this JVM. */
  public static KafkaFenceMetrics global() {
    return GLOBAL;
  }

  /** The lock label for rejections of a consumer guarding {@code locks}, when the record named none of them. */
  static String fallbackLabel(Collection<String> locks) {
    return locks.size() == 1 ? locks.iterator().next() : UNKNOWN_LOCK;
  }

  /**
   * Calls {@code listener} with every lock label that has series now and with each one that gets them later (Kafka
   * configures consumers after the application's registries exist). The listener may be called twice for one label
   * (binding is idempotent); it is removed once it returns false.
   */
  public void onLock(Predicate<String> listener) {
    lockListeners.add(listener);
    for (String lock : new TreeMap<>(counters).keySet()) {
      if (!listener.test(lock)) {
        lockListeners.remove(listener);
        return;
      }
    }
  }

  /** The lock labels that have series, sorted. */
  public List<String> locks() {
    return List.copyOf(new TreeMap<>(counters).keySet());
  }

  /** Creates the series of {@code lock} at 0 (idempotent). */
  void register(String lock) {
    counters(lock);
  }

  void reject(String lockLabel, Rejection reason) {
    counters(lockLabel).rejections[reason.ordinal()].increment();
  }

  void deadLetter(String lockLabel, boolean sent) {
    counters(lockLabel).deadLetters[sent ? 0 : 1].increment();
  }

  void duplicate(String lockLabel) {
    counters(lockLabel).duplicates.increment();
  }

  void storeFailure() {
    storeFailures.increment();
  }

  /** Fence store calls that failed (and were retried while the poll waited). */
  public long storeFailures() {
    return storeFailures.sum();
  }

  /** Records quarantined for {@code lock} (a label) and {@code reason}. */
  public long rejections(String lock, Rejection reason) {
    Counters c = counters.get(lock);
    return c == null ? 0 : c.rejections[reason.ordinal()].sum();
  }

  /** Quarantined records of {@code lock} that reached the dead-letter topic ({@code sent}) or did not. */
  public long deadLetters(String lock, boolean sent) {
    Counters c = counters.get(lock);
    return c == null ? 0 : c.deadLetters[sent ? 0 : 1].sum();
  }

  /** Later copies of an outbox event of {@code lock} that the outbox rule skipped (each time one was read). */
  public long duplicatesSkipped(String lock) {
    Counters c = counters.get(lock);
    return c == null ? 0 : c.duplicates.sum();
  }

  /** Every series of the rejections and dead letters, by metric, lock, then reason or outcome. */
  public List<Sample> samples() {
    List<Sample> out = new ArrayList<>();
    Map<String, Counters> sorted = new TreeMap<>(counters);
    sorted.forEach((lock, c) -> REASONS.forEach(r -> out.add(new Sample(REJECTIONS, lock, r.label(),
        c.rejections[r.ordinal()].sum()))));
    sorted.forEach((lock, c) -> {
      for (int i = 0; i < OUTCOMES.size(); i++) {
        out.add(new Sample(DEAD_LETTERS, lock, OUTCOMES.get(i), c.deadLetters[i].sum()));
      }
    });
    return out;
  }

  /** Prometheus text exposition (format 0.0.4) of every family, with HELP and TYPE lines. */
  public String prometheusText() {
    StringBuilder b = new StringBuilder(2048);
    String family = null;
    for (Sample s : samples()) {
      if (!s.name().equals(family)) {
        family = s.name();
        b.append("# HELP ").append(family).append(family.equals(REJECTIONS)
            ? " Requests, writes or records refused by a fence, by reason.\n"
            : " Records quarantined by the Kafka fence, by dead-letter outcome.\n");
        b.append("# TYPE ").append(family).append(" counter\n");
      }
      b.append(family).append("{fence=\"").append(FENCE).append("\",lock=\"");
      escape(b, s.lock());
      b.append(family.equals(REJECTIONS) ? "\",reason=\"" : "\",outcome=\"").append(s.label()).append("\"} ")
          .append(s.value()).append('\n');
    }
    b.append("# HELP ").append(DUPLICATES).append(" Later copies of an outbox event the Kafka fence skipped.\n# TYPE ")
        .append(DUPLICATES).append(" counter\n");
    new TreeMap<>(counters).forEach((lock, c) -> {
      b.append(DUPLICATES).append("{fence=\"").append(FENCE).append("\",lock=\"");
      escape(b, lock);
      b.append("\"} ").append(c.duplicates.sum()).append('\n');
    });
    b.append("# HELP ").append(STORE_FAILURES).append(" Kafka fence store calls that failed; the poll waited and "
        + "retried.\n# TYPE ").append(STORE_FAILURES).append(" counter\n").append(STORE_FAILURES)
        .append("{fence=\"").append(FENCE).append("\"} ").append(storeFailures.sum()).append('\n');
    return b.toString();
  }

  private Counters counters(String lock) {
    Counters c = counters.get(lock);
    if (c != null) {
      return c;
    }
    Counters fresh = new Counters();
    c = counters.putIfAbsent(lock, fresh);
    if (c != null) {
      return c;
    }
    lockListeners.removeIf(l -> !l.test(lock));
    return fresh;
  }

  private static LongAdder[] adders(int n) {
    LongAdder[] a = new LongAdder[n];
    for (int i = 0; i < n; i++) {
      a[i] = new LongAdder();
    }
    return a;
  }

  private static void escape(StringBuilder b, String value) {
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c == '\\' || c == '"') {
        b.append('\\').append(c);
      } else if (c == '\n') {
        b.append("\\n");
      } else {
        b.append(c);
      }
    }
  }
}
