package dev.fencing.agent.instrumentation.http;

import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.HttpHook;
import dev.fencing.agent.config.ConfigLoader;
import dev.fencing.agent.policy.BenchGates;
import dev.fencing.agent.instrumentation.api.RejectionCounters;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
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
 * What the HTTP client advice calls per request: method classification, fenced-destination match and the policy.
 * "noop" is a hook that returns a constant decision (the least an advice could call).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class HttpHookBenchmark {
  @Param({"noop", "agent"})
  public String hook;

  private HttpHook h;
  // Fields, not constants, so the JIT cannot fold the destination match away.
  private String method = "POST";
  private String fencedHost = "ledger.internal";
  private String otherHost = "127.0.0.1";

  @Setup
  public void setUp() {
    if ("noop".equals(hook)) {
      h = new HttpHook() {
        @Override
        public Decision decide(String method, String scheme, String host, int port) {
          return BenchGates.CONSTANT_TAG;
        }

        @Override
        public void responded(int status, String rejectedHeader) {}

        @Override
        public void observe(CompletableFuture<?> response) {}
      };
    } else {
      BenchGates.install("agent");
      Properties p = new Properties();
      p.setProperty("fencing.lock", BenchGates.LOCK);
      p.setProperty("fencing.fenced.http", "ledger.internal:8443,payments.internal,inventory.internal:80");
      h = new HttpFencing(ConfigLoader.load("", p, Map.of()), new RejectionCounters());
      if (!h.decide("POST", "https", fencedHost, 8443).isTag()) {
        throw new IllegalStateException("expected a tag decision");
      }
    }
  }

  @Benchmark
  public Decision postFenced() {
    return h.decide(method, "https", fencedHost, 8443);
  }

  @Benchmark
  public Decision postUnfenced() {
    return h.decide(method, "http", otherHost, 8080);
  }
}
