package dev.fencing.agent.events;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * Adds an event to the current span of the OpenTelemetry Java agent, when that agent is attached and the thread is
 * traced. That agent keeps its API on the boot class path under a shaded name; we reach it reflectively (resolved
 * once, then plain method handle calls), so without it this is a no-op and nothing of OpenTelemetry's is bundled for
 * it. The event lands on whichever span is current when the hook decides: the client span when the OpenTelemetry
 * agent's advice runs outside ours, else the caller's span: either way the trace shows it.
 */
final class SpanEvents {
  /**
   * io.opentelemetry.javaagent.shaded.io.opentelemetry.api., built at run time: the shade plugin would relocate a string
   * constant naming io.opentelemetry (we bundle a relocated OpenTelemetry SDK for OTLP metrics).
   */
  private static final String API =
      String.join(".", "io", "opentelemetry", "javaagent", "shaded", "io", "opentelemetry", "api", "");

  /** Null when the OpenTelemetry agent is absent (resolved on the first event, after both premains have run). */
  private static final Handles HANDLES = Handles.resolve();

  private SpanEvents() {}

  static boolean available() {
    return HANDLES != null;
  }

  /** Adds {@code name} with string attributes {@code keyValues} (key, value, key, value...) if the thread is traced. */
  static void add(String name, String... keyValues) {
    Handles h = HANDLES;
    if (h == null) {
      return;
    }
    try {
      Object span = h.current.invoke();
      if (!(boolean) h.isRecording.invoke(span)) {
        return;
      }
      Object builder = h.builder.invoke();
      for (int i = 0; i + 1 < keyValues.length; i += 2) {
        if (keyValues[i + 1] != null) {
          h.put.invoke(builder, keyValues[i], keyValues[i + 1]);
        }
      }
      h.addEvent.invoke(span, name, h.build.invoke(builder));
    } catch (Throwable ignored) {
      // tracing is a nicety: never let it fail a side effect
    }
  }

  private static final class Handles {
    final MethodHandle current;
    final MethodHandle isRecording;
    final MethodHandle builder;
    final MethodHandle put;
    final MethodHandle build;
    final MethodHandle addEvent;

    private Handles(MethodHandle current, MethodHandle isRecording, MethodHandle builder, MethodHandle put,
        MethodHandle build, MethodHandle addEvent) {
      this.current = current;
      this.isRecording = isRecording;
      this.builder = builder;
      this.put = put;
      this.build = build;
      this.addEvent = addEvent;
    }

    static Handles resolve() {
      try {
        Class<?> span = Class.forName(API + "trace.Span", false, null);
        Class<?> attributes = Class.forName(API + "common.Attributes", false, null);
        Class<?> builder = Class.forName(API + "common.AttributesBuilder", false, null);
        MethodHandles.Lookup l = MethodHandles.publicLookup();
        return new Handles(
            l.findStatic(span, "current", MethodType.methodType(span)),
            l.findVirtual(span, "isRecording", MethodType.methodType(boolean.class)),
            l.findStatic(attributes, "builder", MethodType.methodType(builder)),
            l.findVirtual(builder, "put", MethodType.methodType(builder, String.class, String.class)),
            l.findVirtual(builder, "build", MethodType.methodType(attributes)),
            l.findVirtual(span, "addEvent", MethodType.methodType(span, String.class, attributes)));
      } catch (ReflectiveOperationException | LinkageError e) {
        return null;
      }
    }
  }
}
