package dev.fencing.agent.otel;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.ReadWriteSpan;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.SpanProcessor;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * Stamps every CLIENT and PRODUCER span with the lock and token a side effect made at that moment on that thread
 * carries ({@code dev.fencing.agent.bootstrap.Fencing#current()}).
 *
 * <p>Why a span processor rather than setting attributes on {@code Span.current()} from our hooks: our JDBC and Kafka
 * hooks advise the same methods as the OpenTelemetry agent's, and ByteBuddy nests advice in the order the agents
 * registered their transformers, so with {@code -javaagent:otel.jar} first our hook runs before the client span
 * exists. onStart runs inside the span's creation whatever the order.
 *
 * <p>The bootstrap part is looked up on the boot class path only ({@code Class.forName(.., null)}): this class lives in
 * the OpenTelemetry agent's extension loader, which also sees fencing-agent.jar and would otherwise load a second,
 * never-installed copy when the OpenTelemetry agent starts first. Until our premain has run, spans get nothing.
 */
final class FencingSpanProcessor implements SpanProcessor {
  static final AttributeKey<String> LOCK = AttributeKey.stringKey("fencing.lock");
  static final AttributeKey<Long> TOKEN = AttributeKey.longKey("fencing.token");
  private static final MethodType OBJECT = MethodType.methodType(Object.class);

  private volatile Bridge bridge;

  @Override
  public void onStart(Context parentContext, ReadWriteSpan span) {
    SpanKind kind = span.getKind();
    if (kind != SpanKind.CLIENT && kind != SpanKind.PRODUCER) {
      return;
    }
    Bridge b = bridge;
    if (b == null) {
      b = Bridge.resolve();
      if (b == null) {
        return; // our agent has not started (yet): try again on the next span
      }
      bridge = b;
    }
    try {
      Object decision = b.current.invokeExact();
      if (decision == null) {
        return; // the fencing agent's own traffic
      }
      span.setAttribute(LOCK, (String) b.lock.invokeExact(decision));
      long token = (long) b.token.invokeExact(decision);
      if (token > 0) {
        span.setAttribute(TOKEN, token);
      }
    } catch (Throwable ignored) {
      // never fail the application's span
    }
  }

  @Override
  public boolean isStartRequired() {
    return true;
  }

  @Override
  public void onEnd(ReadableSpan span) {}

  @Override
  public boolean isEndRequired() {
    return false;
  }

  @Override
  public CompletableResultCode shutdown() {
    return CompletableResultCode.ofSuccess();
  }

  /** Method handles on the bootstrap part, typed with Object so this class never links against it. */
  private static final class Bridge {
    final MethodHandle current;
    final MethodHandle lock;
    final MethodHandle token;

    private Bridge(MethodHandle current, MethodHandle lock, MethodHandle token) {
      this.current = current;
      this.lock = lock;
      this.token = token;
    }

    static Bridge resolve() {
      try {
        Class<?> fencing = Class.forName("dev.fencing.agent.bootstrap.Fencing", false, null);
        Class<?> decision = Class.forName("dev.fencing.agent.bootstrap.Decision", false, null);
        MethodHandles.Lookup l = MethodHandles.publicLookup();
        return new Bridge(
            l.findStatic(fencing, "current", MethodType.methodType(decision)).asType(OBJECT),
            l.findVirtual(decision, "lock", MethodType.methodType(String.class))
                .asType(MethodType.methodType(String.class, Object.class)),
            l.findVirtual(decision, "token", MethodType.methodType(long.class))
                .asType(MethodType.methodType(long.class, Object.class)));
      } catch (ReflectiveOperationException | LinkageError e) {
        return null;
      }
    }
  }
}
