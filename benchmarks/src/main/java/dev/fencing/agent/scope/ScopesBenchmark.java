package dev.fencing.agent.scope;

import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.bootstrap.Sections;
import dev.fencing.agent.config.ConfigLoader;
import dev.fencing.agent.policy.BenchGates;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The decision through the bootstrap bridge with lock scopes (fencing.sections), as the advice calls it:
 * {@code noop} a constant gate; {@code jvm-wide} today's single-lock policy holding (no sections: the gate is the
 * policy itself); {@code outside} a JVM with sections only, a call outside every section (passed, counted under
 * "none"); {@code section} inside a section whose lock is held (the thread's scope routes to that lock's policy).
 * {@code sectionEntry} adds entering and leaving the section around each decision.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class ScopesBenchmark {
  private static final String ORIGIN = "bench.Jobs.run";

  @Param({"noop", "jvm-wide", "outside", "section"})
  public String gate;

  private Object entered;

  @Setup(Level.Trial)
  public void setUp() {
    if (gate.equals("noop") || gate.equals("jvm-wide")) {
      BenchGates.install(gate.equals("noop") ? "noop" : "agent");
      Sections.install(Map.of());
      return;
    }
    Scopes scopes = Scopes.of(ConfigLoader.load("sections=bench.Jobs#run@bench", new Properties(), Map.of()));
    scopes.locks().get(0).state().granted(42, 1, 1, System.nanoTime() + TimeUnit.HOURS.toNanos(1));
    Fencing.install(scopes.gate());
    Sections.install(scopes.sectionTable());
    if (gate.equals("section")) {
      entered = Sections.enter(ORIGIN, true); // on the benchmark thread: Scope.Thread setup runs there
      if (!Fencing.decide(Channel.JDBC, true, true).isTag()) {
        throw new IllegalStateException("expected a tag decision inside the section");
      }
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    Sections.exit(entered);
  }

  @Benchmark
  public Decision writeFenced() {
    return Fencing.decide(Channel.JDBC, true, true);
  }

  @Benchmark
  public Decision read() {
    return Fencing.decide(Channel.JDBC, false, false);
  }

  /** Entry into the section, one decision, exit: what a short section with one write costs beyond the write. */
  @Benchmark
  public Decision sectionEntry() {
    Object in = Sections.enter(ORIGIN, true);
    try {
      return Fencing.decide(Channel.JDBC, true, true);
    } finally {
      Sections.exit(in);
    }
  }
}
