package dev.fencing.agent.instrumentation.kafka;

import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.KafkaHook;
import dev.fencing.agent.policy.BenchGates;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/** What the producer advice calls per record: topic match (exact set, then globs) and the policy. */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class KafkaHookBenchmark {
  @Param({"noop", "agent"})
  public String hook;

  private KafkaHook h;
  private String exactTopic = "ledger";
  private String globTopic = "payments-eu-west";
  private String otherTopic = "audit-log";

  @Setup
  public void setUp() {
    if ("noop".equals(hook)) {
      h = topic -> BenchGates.CONSTANT_TAG;
    } else {
      BenchGates.install("agent");
      h = new KafkaFencing(List.of("ledger", "orders", "payments-*", "inventory-*-v2"));
      if (!h.decide(exactTopic).isTag()) {
        throw new IllegalStateException("expected a tag decision");
      }
    }
  }

  @Benchmark
  public Decision sendExactFenced() {
    return h.decide(exactTopic);
  }

  @Benchmark
  public Decision sendGlobFenced() {
    return h.decide(globTopic);
  }

  /** The worst case: misses the set and every glob. */
  @Benchmark
  public Decision sendUnfenced() {
    return h.decide(otherTopic);
  }

  /**
   * A record toward an unfenced topic as the producer handles it: the decision, then its append to the partition's
   * open batch, which notes the grant once per batch and thread (the steady state: two reference comparisons).
   */
  @Benchmark
  public Decision sendUnfencedAndAppend() {
    Decision d = h.decide(otherTopic);
    h.appended(batch);
    return d;
  }

  private final Object batch = new Object();
}
