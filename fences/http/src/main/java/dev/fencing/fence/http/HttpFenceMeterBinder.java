package dev.fencing.fence.http;

import dev.fencing.protocol.Rejection;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.List;

/**
 * The HTTP fence's refusals ({@link FenceMetrics}) as Micrometer counters named {@value #REJECTIONS} with tags
 * {@code fence}, {@code lock}, {@code reason}, so that each registry renders its own style (Prometheus:
 * {@code fencing_fence_rejections_total{fence="http",lock,reason}}; OTLP, Datadog: {@code fencing.fence.rejections}).
 * Tags are bounded: the guarded lock names (or {@code (unknown)}) and the {@link Rejection} labels; every combination
 * starts at 0. The counters read the fence's own adders, so binding adds nothing to the request path.
 *
 * <p>{@code new HttpFenceMeterBinder(fence).bindTo(registry)}, or a bean in Spring Boot (the starter
 * {@code fencing-fence-spring-boot-starter} declares it). Micrometer is an optional dependency of the fence: this
 * class is the only one that needs it.
 */
public final class HttpFenceMeterBinder implements MeterBinder {

  public static final String REJECTIONS = "fencing.fence.rejections";

  private final List<FenceMetrics> metrics;

  /** The counters of {@code fence} ({@link HttpFence#metrics()}). */
  public HttpFenceMeterBinder(HttpFence fence) {
    this(fence.metrics());
  }

  /** The counters of one or more {@link FenceMetrics} (distinct locks: a shared lock would be counted once). */
  public HttpFenceMeterBinder(FenceMetrics... metrics) {
    this.metrics = List.of(metrics);
  }

  @Override
  public void bindTo(MeterRegistry registry) {
    for (FenceMetrics m : metrics) {
      for (String lock : m.locks()) {
        for (Rejection r : Rejection.values()) {
          FunctionCounter.builder(REJECTIONS, m, x -> x.count(lock, r))
              .description("Requests, writes or records refused by a fence, by reason.")
              .tags("fence", m.fence(), "lock", lock, "reason", r.label())
              .register(registry);
        }
      }
    }
  }
}
