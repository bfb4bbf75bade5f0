package dev.fencing.agent.metrics;

import dev.fencing.agent.bootstrap.BlockReason;
import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.instrumentation.api.RejectionCounters;
import dev.fencing.agent.instrumentation.api.DestinationInventory;
import dev.fencing.agent.instrumentation.api.SideEffectCounters;
import dev.fencing.agent.status.BuildInfo;
import dev.fencing.agent.token.Grant;
import dev.fencing.agent.token.LeasePhase;
import dev.fencing.agent.token.LossReason;
import dev.fencing.agent.token.TokenState;
import dev.fencing.agent.token.TokenView;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;

/**
 * The agent's series (docs/DESIGN.md section 7), defined once: the Prometheus endpoint ({@link AgentMetrics}, Micrometer)
 * and the OTLP export (OpenTelemetry SDK) are both built from this list, so they cannot drift apart. Every value is
 * read from the token state or the counters when collected; every known label combination is listed, so it starts at 0.
 *
 * <p>Naming: {@link Series#name()} is the Prometheus name without the unit and {@code _total} suffixes. Prometheus
 * appends both ({@link Series#prometheusName()}); OTLP carries {@link Series#otlpName()} (the name with its unit
 * suffix, never {@code _total}) and the UCUM unit, which Prometheus' OTLP receiver turns into the same name.
 */
public final class FencingSeries {
  public enum Kind { GAUGE, COUNTER }

  /**
   * One labelled time series.
   *
   * @param labels name, value, name, value, ...
   * @param asLong the value of an integer series (null for a floating-point one)
   */
  public record Point(List<String> labels, DoubleSupplier asDouble, LongSupplier asLong) {
    static Point ofLong(LongSupplier value, String... labels) {
      return new Point(List.of(labels), () -> value.getAsLong(), value);
    }

    static Point ofDouble(DoubleSupplier value, String... labels) {
      return new Point(List.of(labels), value, null);
    }
  }

  /**
   * @param unit the Prometheus unit suffix ({@code seconds}, {@code ratio}) or null
   */
  public record Series(String name, Kind kind, String unit, String help, List<Point> points) {
    public boolean integer() {
      return points.get(0).asLong() != null;
    }

    /** The name in the Prometheus exposition, e.g. fencing_side_effects_total, fencing_lease_remaining_seconds. */
    public String prometheusName() {
      return otlpName() + (kind == Kind.COUNTER ? "_total" : "");
    }

    /** The OTLP metric name: the Prometheus name without {@code _total} (OTLP marks counters as monotonic sums). */
    public String otlpName() {
      return unit == null ? name : name + "_" + unit;
    }

    /** The UCUM unit OTLP carries: "s" for seconds, "1" for a ratio, "" for none. */
    public String otlpUnit() {
      if (unit == null) {
        return "";
      }
      switch (unit) {
        case "seconds":
          return "s";
        case "ratio":
          return "1";
        default:
          throw new IllegalStateException("no UCUM unit for " + unit);
      }
    }
  }

  private FencingSeries() {}

  /** The {@code state} label of {@code fencing_agent_state}: the lease phases, and {@code no_lease}. */
  public static final List<String> STATES = states();

  /** The {@code state} of an agent with {@code fencing.lease.enabled=false}: it never campaigns (nor fails to). */
  public static final String NO_LEASE = "no_lease";

  /**
   * One lock label's sources. {@code leaseSeries}: the lease and token series carry this label (a lock this JVM
   * campaigns for; also "none" in a JVM without any lease, as it always did); {@code sectionsSkipped}: the lock's
   * skipped void sections, null for a lock without sections.
   */
  public record LockSeries(TokenState state, boolean leaseSeries, SideEffectCounters sideEffects,
      LongSupplier sectionsSkipped) {
    String lock() {
      return state.lock();
    }
  }

  /** An etcd agent with one lock label and a lease (tests, tools). */
  public static List<Series> of(TokenState state, SideEffectCounters sideEffects, RejectionCounters rejections) {
    return of(List.of(new LockSeries(state, true, sideEffects, null)), rejections, BuildInfo.current("etcd"), true);
  }

  /** As above, with what {@code fencing_build_info} says and whether the JVM campaigns at all. */
  public static List<Series> of(TokenState state, SideEffectCounters sideEffects, RejectionCounters rejections,
      BuildInfo build, boolean leaseEnabled) {
    return of(List.of(new LockSeries(state, true, sideEffects, null)), rejections, build, leaseEnabled);
  }

  /** As below, for an etcd agent with a lease (tests, tools). */
  public static List<Series> of(dev.fencing.agent.scope.Scopes scopes) {
    return of(scopes, BuildInfo.current("etcd"), true);
  }

  /** The series of every lock of this JVM (scopes), each labelled with its lock: bounded by the configuration. */
  public static List<Series> of(dev.fencing.agent.scope.Scopes scopes, BuildInfo build, boolean leaseEnabled) {
    List<LockSeries> locks = new ArrayList<>();
    boolean anyLease = !scopes.locks().isEmpty();
    for (dev.fencing.agent.scope.LockRuntime r : scopes.all()) {
      locks.add(new LockSeries(r.state(), r.campaigns() || !anyLease, r.counters(),
          r.sections().isEmpty() ? null : r::skippedCount));
    }
    List<Series> series = new ArrayList<>(of(locks, scopes.rejections(), build, leaseEnabled));
    series.add(destinations(locks.stream().map(LockSeries::lock).toList(), scopes.inventory()));
    return List.copyOf(series);
  }

  /**
   * {@code fencing_destinations}: how many destinations (tables, HTTP hosts, topics) each lock's side effects went to,
   * by channel and status: bounded by locks x 3 x 3, never a destination's name (those are in /status).
   */
  public static Series destinations(List<String> locks, DestinationInventory inventory) {
    List<Point> points = new ArrayList<>();
    for (String lock : locks) {
      for (Channel c : Channel.values()) {
        for (DestinationInventory.Status st : DestinationInventory.Status.values()) {
          points.add(Point.ofLong(() -> inventory.count(lock, c, st), "lock", lock, "channel", c.label(),
              "status", st.label()));
        }
      }
    }
    return new Series("fencing_destinations", Kind.GAUGE, null,
        "Destinations (JDBC tables, HTTP hosts, Kafka topics) the lock's side effects went to, by status",
        List.copyOf(points));
  }

  /**
   * @param build what {@code fencing_build_info} says
   * @param leaseEnabled false for {@code fencing.lease.enabled=false}: its state is {@code no_lease}
   */
  public static List<Series> of(List<LockSeries> locks, RejectionCounters rejections, BuildInfo build,
      boolean leaseEnabled) {
    List<LockSeries> leased = new ArrayList<>();
    for (LockSeries l : locks) {
      if (l.leaseSeries()) {
        leased.add(l);
      }
    }
    List<Series> all = new ArrayList<>();
    // One-hot over a fixed set, so "state=failed == 1" is an alert and every state starts at 0 (no stale series
    // when the state changes).
    List<Point> states = new ArrayList<>();
    List<Point> builds = new ArrayList<>();
    for (LockSeries l : leased) {
      for (String st : STATES) {
        states.add(Point.ofLong(() -> st.equals(stateLabel(l.state(), leaseEnabled)) ? 1 : 0, "lock", l.lock(),
            "state", st));
      }
      builds.add(Point.ofLong(() -> 1, "lock", l.lock(), "version", build.version(), "java", build.java(),
          "coordinator", build.coordinator()));
    }
    all.add(new Series("fencing_agent_state", Kind.GAUGE, null,
        "1 for the agent's current state (holding, standby, expired, lost, starting, failed, no_lease), 0 for the others",
        List.copyOf(states)));
    all.add(new Series("fencing_build_info", Kind.GAUGE, null,
        "Always 1: the agent's version, the Java it runs on and its coordinator, as labels",
        List.copyOf(builds)));
    all.add(new Series("fencing_lease_held", Kind.GAUGE, null, "1 while this JVM holds a valid lease on the lock",
        perLock(leased, l -> Point.ofLong(() -> l.state().phase() == LeasePhase.HOLDING ? 1 : 0, "lock", l.lock()))));
    all.add(new Series("fencing_lease_remaining", Kind.GAUGE, "seconds",
        "Time left before the local lease deadline; 0 when not holding",
        perLock(leased, l -> Point.ofDouble(() -> remainingSeconds(l.state()), "lock", l.lock()))));
    all.add(new Series("fencing_token", Kind.GAUGE, null, "Current (or last) fencing token; exact up to 2^53 in Prometheus",
        perLock(leased, l -> Point.ofLong(() -> token(l.state().view()), "lock", l.lock()))));
    all.add(new Series("fencing_token_headroom", Kind.GAUGE, "ratio", "1 - token / fencing.token.max",
        perLock(leased, l -> Point.ofDouble(() -> 1.0 - token(l.state().view()) / (double) l.state().tokenMax(), "lock",
            l.lock()))));
    all.add(new Series("fencing_lease_acquisitions", Kind.COUNTER, null, "Leases acquired",
        perLock(leased, l -> Point.ofLong(l.state()::acquisitions, "lock", l.lock()))));
    List<Point> losses = new ArrayList<>();
    for (LockSeries l : leased) {
      for (LossReason r : LossReason.values()) {
        losses.add(Point.ofLong(() -> l.state().losses(r), "lock", l.lock(), "reason", r.label()));
      }
    }
    all.add(new Series("fencing_lease_losses", Kind.COUNTER, null, "Leases lost, by reason", List.copyOf(losses)));
    all.addAll(sideEffectSeries(locks, rejections));
    all.add(new Series("fencing_token_reuse", Kind.COUNTER, null,
        "Grants whose token was not above the highest seen, or came from another etcd cluster",
        perLock(leased, l -> Point.ofLong(l.state()::reuseCount, "lock", l.lock()))));
    all.add(new Series("fencing_token_overflow", Kind.COUNTER, null, "Grants whose token was above fencing.token.max",
        perLock(leased, l -> Point.ofLong(l.state()::overflowCount, "lock", l.lock()))));
    List<Point> skipped = new ArrayList<>();
    for (LockSeries l : locks) {
      if (l.sectionsSkipped() != null) {
        skipped.add(Point.ofLong(l.sectionsSkipped(), "lock", l.lock()));
      }
    }
    if (!skipped.isEmpty()) {
      all.add(new Series("fencing_section_skipped", Kind.COUNTER, null,
          "Void sections (fencing.sections) not run because this JVM did not hold their lock", List.copyOf(skipped)));
    }
    all.removeIf(series -> series.points().isEmpty());
    return List.copyOf(all);
  }

  /**
   * The series of what a lock's side effects came to (seen, blocked by reason, rejected by fences, hook failures):
   * every lock label has them, the locks of the configuration from the start and an application lock the agent
   * captures from its capture on ({@link #ofCaptured}).
   */
  private static List<Series> sideEffectSeries(List<LockSeries> locks, RejectionCounters rejections) {
    List<Series> series = new ArrayList<>();
    List<Point> effects = new ArrayList<>();
    List<Point> blocked = new ArrayList<>();
    for (LockSeries l : locks) {
      for (Channel c : Channel.values()) {
        for (boolean fenced : new boolean[] {false, true}) {
          for (SideEffectCounters.Outcome o : SideEffectCounters.Outcome.values()) {
            effects.add(Point.ofLong(() -> l.sideEffects().count(c, fenced, o),
                "lock", l.lock(), "channel", c.label(), "fenced", Boolean.toString(fenced), "outcome", o.label()));
            if (SideEffectCounters.hasReason(o)) {
              for (BlockReason r : BlockReason.values()) {
                blocked.add(Point.ofLong(() -> l.sideEffects().count(c, fenced, o, r), "lock", l.lock(), "channel",
                    c.label(), "fenced", Boolean.toString(fenced), "outcome", o.label(), "reason", r.label()));
              }
            }
          }
        }
      }
    }
    series.add(new Series("fencing_side_effects", Kind.COUNTER, null,
        "Side effects seen by the hooks, by channel, destination and outcome", List.copyOf(effects)));
    // The blocked and would_block side effects again, by why: a series of its own, so the label sets of
    // fencing_side_effects_total stay as they are (queries and alerts on it keep working).
    series.add(new Series("fencing_side_effects_blocked", Kind.COUNTER, null,
        "Side effects blocked (or, in observe mode, that would have been), by channel, destination and block reason",
        List.copyOf(blocked)));
    List<Point> rejected = new ArrayList<>();
    for (LockSeries l : locks) {
      for (Channel c : Channel.values()) {
        for (RejectionCounters.Reason r : RejectionCounters.Reason.values()) {
          rejected.add(Point.ofLong(() -> rejections.count(l.lock(), c, r), "lock", l.lock(), "channel", c.label(),
              "reason", r.label()));
        }
      }
    }
    series.add(new Series("fencing_rejections", Kind.COUNTER, null,
        "Side effects of this JVM rejected by fences (stale or missing token), as the agent saw them", List.copyOf(rejected)));
    List<Point> hookFailures = new ArrayList<>();
    for (LockSeries l : locks) {
      for (Channel c : Channel.values()) {
        hookFailures.add(Point.ofLong(() -> l.sideEffects().hookFailures(c), "lock", l.lock(), "channel", c.label()));
      }
    }
    series.add(new Series("fencing_hook_failures", Kind.COUNTER, null,
        "Calls a hook failed to handle (an agent or library bug); fencing.fail-mode decided them", List.copyOf(hookFailures)));
    series.removeIf(one -> one.points().isEmpty());
    return series;
  }

  /**
   * The side-effect series of an application lock the agent captured (Curator, jetcd), labelled with its lock name,
   * added to the exposition when it is captured (bounded by {@code fencing.capture.max-locks}). Its lease series are
   * not: the lease is the application's, and /status lists its state.
   */
  public static List<Series> ofCaptured(dev.fencing.agent.scope.LockRuntime r, RejectionCounters rejections) {
    return List.copyOf(sideEffectSeries(List.of(new LockSeries(r.state(), false, r.counters(), null)), rejections));
  }

  /** The {@code state} label now: the lease phase in lower case, or {@link #NO_LEASE}. */
  public static String stateLabel(TokenState s, boolean leaseEnabled) {
    return leaseEnabled ? s.phase().name().toLowerCase(Locale.ROOT) : NO_LEASE;
  }

  private static List<String> states() {
    List<String> out = new ArrayList<>();
    for (LeasePhase p : LeasePhase.values()) {
      out.add(p.name().toLowerCase(Locale.ROOT));
    }
    out.add(NO_LEASE);
    return List.copyOf(out);
  }

  private static List<Point> perLock(List<LockSeries> locks, java.util.function.Function<LockSeries, Point> point) {
    List<Point> points = new ArrayList<>();
    for (LockSeries l : locks) {
      points.add(point.apply(l));
    }
    return List.copyOf(points);
  }

  static double remainingSeconds(TokenState s) {
    TokenView v = s.view();
    long now = s.now();
    if (v.phaseAt(now) != LeasePhase.HOLDING) {
      return 0;
    }
    return Math.max(0, v.grant().deadlineNanos() - now) / 1e9;
  }

  private static long token(TokenView v) {
    Grant g = v.grant();
    return g == null ? 0 : g.token();
  }
}
