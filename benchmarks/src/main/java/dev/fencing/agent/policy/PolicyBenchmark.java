package dev.fencing.agent.policy;

import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.Fencing;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The decision every hook asks for, through the bootstrap bridge as the advice calls it: the real policy holding a
 * lease (volatile read, clock read, counter increment) against a gate that returns a constant.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class PolicyBenchmark {
  @Param({"noop", "agent"})
  public String gate;

  @Setup
  public void setUp() {
    BenchGates.install(gate);
    if (!Fencing.decide(Channel.JDBC, true, true).isTag()) {
      throw new IllegalStateException("expected a tag decision");
    }
  }

  @Benchmark
  public Decision writeFenced() {
    return Fencing.decide(Channel.JDBC, true, true);
  }

  @Benchmark
  public Decision writeUnfenced() {
    return Fencing.decide(Channel.HTTP, true, false);
  }

  @Benchmark
  public Decision read() {
    return Fencing.decide(Channel.JDBC, false, false);
  }
}
