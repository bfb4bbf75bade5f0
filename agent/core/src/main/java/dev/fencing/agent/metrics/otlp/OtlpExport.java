package dev.fencing.agent.metrics.otlp;

import dev.fencing.agent.config.NameValueList;
import dev.fencing.agent.log.AgentLog;
import dev.fencing.agent.metrics.CoordinatorLatency;
import dev.fencing.agent.metrics.FencingSeries;
import dev.fencing.agent.threads.AgentThreads;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributesBuilder;
import io.opentelemetry.api.metrics.DoubleHistogram;
import io.opentelemetry.api.metrics.MeterProvider;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.exporter.otlp.http.metrics.OtlpHttpMetricExporter;
import io.opentelemetry.exporter.otlp.http.metrics.OtlpHttpMetricExporterBuilder;
import io.opentelemetry.sdk.common.InternalTelemetryVersion;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.export.PeriodicMetricReader;
import io.opentelemetry.sdk.resources.Resource;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

/**
 * Pushes {@link FencingSeries} over OTLP/HTTP (protobuf) with the OpenTelemetry SDK bundled in the agent (relocated:
 * the application's own OpenTelemetry, if any, never sees it). Observable instruments read the same state as the
 * Prometheus endpoint at each collection, cumulative temporality.
 *
 * <p>Every thread involved is the agent's: the reader's scheduler and the sender's executor, on which the JDK
 * HttpClient call runs. The HTTP client hook therefore lets the export through untagged and uncounted, in every lease
 * phase (a blocked export would hide exactly the metrics an operator needs when the lease is lost).
 */
public final class OtlpExport {
  private static final AgentLog LOG = AgentLog.get(OtlpExport.class);
  /** JUL keeps loggers weakly: the configured one must stay referenced, or its handler is lost. */
  private static volatile Logger sdkLogger;
  private static final Duration EXPORT_TIMEOUT = Duration.ofSeconds(10);

  private final SdkMeterProvider provider;
  private final ExecutorService sender;
  private final Instruments instruments;

  private OtlpExport(SdkMeterProvider provider, ExecutorService sender, Instruments instruments) {
    this.instruments = instruments;
    this.provider = provider;
    this.sender = sender;
  }

  /** Starts the periodic export; call on an agent thread, never in premain. */
  public static OtlpExport start(OtlpSettings settings, List<FencingSeries.Series> series, Resource resource) {
    return start(settings, series, List.<CoordinatorLatency>of(), resource);
  }

  /** As above, with the coordinator latency histogram ({@code latency} may be null). */
  public static OtlpExport start(OtlpSettings settings, List<FencingSeries.Series> series, CoordinatorLatency latency,
      Resource resource) {
    return start(settings, series, latency == null ? List.of() : List.of(latency), resource);
  }

  /** As above, with one coordinator latency histogram per lock of {@code latencies}. */
  public static OtlpExport start(OtlpSettings settings, List<FencingSeries.Series> series,
      List<CoordinatorLatency> latencies, Resource resource) {
    routeSdkLogging();
    ExecutorService sender = Executors.newSingleThreadExecutor(AgentThreads.factory("fencing-agent-otlp-send"));
    OtlpHttpMetricExporterBuilder exporter = OtlpHttpMetricExporter.builder()
        .setEndpoint(settings.endpoint().toString())
        .setExecutorService(sender)
        .setServiceClassLoader(OtlpExport.class.getClassLoader())
        // The exporter would otherwise report on itself through the (relocated) global OpenTelemetry.
        .setMeterProvider(MeterProvider::noop);
    settings.headers().forEach(exporter::addHeader);
    PeriodicMetricReader reader = PeriodicMetricReader.builder(exporter.build())
        .setInterval(settings.interval())
        // The reader's default (the interval) would give up on the first export of a short interval, which loads the
        // exporter's classes and opens the connection; the exporter's own HTTP timeout is 10 s.
        .setExporterTimeout(settings.interval().compareTo(EXPORT_TIMEOUT) > 0 ? settings.interval() : EXPORT_TIMEOUT)
        .setExecutor(Executors.newSingleThreadScheduledExecutor(AgentThreads.factory("fencing-agent-otlp")))
        // LATEST would add the SDK's own otel.sdk.* series to the export: only the agent's series go out.
        .setInternalTelemetryVersion(InternalTelemetryVersion.LEGACY)
        .build();
    SdkMeterProvider provider = SdkMeterProvider.builder().setResource(resource).registerMetricReader(reader).build();
    Instruments instruments = new Instruments(provider.get("dev.fencing.agent"));
    instruments.register(series);
    for (CoordinatorLatency latency : latencies) {
      register(provider.get("dev.fencing.agent"), latency);
    }
    return new OtlpExport(provider, sender, instruments);
  }

  /**
   * One instrument per series name, whose callback reads the series' points as they are at each collection: the
   * points of a lock captured after start ({@link #add}) join the instrument of their name.
   */
  private static final class Instruments {
    private final Meter meter;
    private final java.util.Map<String, List<Observed>> byName = new java.util.concurrent.ConcurrentHashMap<>();

    Instruments(Meter meter) {
      this.meter = meter;
    }

    /** A point and its attributes, built once. */
    private record Observed(FencingSeries.Point point, Attributes attributes) {
    }

    synchronized void register(List<FencingSeries.Series> series) {
      for (FencingSeries.Series s : series) {
        List<Observed> points = byName.get(s.otlpName());
        boolean first = points == null;
        if (first) {
          points = new java.util.concurrent.CopyOnWriteArrayList<>();
          byName.put(s.otlpName(), points);
        }
        List<Observed> add = new java.util.ArrayList<>();
        for (FencingSeries.Point p : s.points()) {
          add.add(new Observed(p, attributes(p.labels())));
        }
        points.addAll(add);
        if (first) {
          instrument(s, points);
        }
      }
    }

    private void instrument(FencingSeries.Series s, List<Observed> points) {
      if (s.kind() == FencingSeries.Kind.COUNTER) {
        meter.counterBuilder(s.otlpName()).setDescription(s.help()).setUnit(s.otlpUnit()).buildWithCallback(m -> {
          for (Observed o : points) {
            m.record(o.point().asLong().getAsLong(), o.attributes());
          }
        });
      } else if (s.integer()) {
        meter.gaugeBuilder(s.otlpName()).setDescription(s.help()).setUnit(s.otlpUnit()).ofLongs().buildWithCallback(m -> {
          for (Observed o : points) {
            m.record(o.point().asLong().getAsLong(), o.attributes());
          }
        });
      } else {
        meter.gaugeBuilder(s.otlpName()).setDescription(s.help()).setUnit(s.otlpUnit()).buildWithCallback(m -> {
          for (Observed o : points) {
            m.record(o.point().asDouble().getAsDouble(), o.attributes());
          }
        });
      }
    }
  }

  /** Exports {@code more} from the next collection on (the series of a lock captured after start). */
  public void add(List<FencingSeries.Series> more) {
    instruments.register(more);
  }

  /**
   * A histogram has no asynchronous form in OpenTelemetry: each recorded duration is recorded again into an SDK
   * histogram with the same bucket bounds (seconds, unit "s", so Prometheus' OTLP receiver names it
   * fencing_coordinator_request_duration_seconds). Only requests from the export's start on are in it; the agent
   * starts the export before its first coordinator request.
   */
  private static void register(Meter meter, CoordinatorLatency latency) {
    List<Double> bounds = new java.util.ArrayList<>();
    for (double b : CoordinatorLatency.bounds()) {
      bounds.add(b);
    }
    DoubleHistogram h = meter.histogramBuilder(CoordinatorLatency.NAME).setDescription(CoordinatorLatency.HELP)
        .setUnit("s").setExplicitBucketBoundariesAdvice(bounds).build();
    Attributes[] byOp = new Attributes[CoordinatorLatency.Op.values().length];
    for (CoordinatorLatency.Op op : CoordinatorLatency.Op.values()) {
      byOp[op.ordinal()] = Attributes.builder().put("lock", latency.lock()).put("op", op.label()).build();
    }
    latency.listener((op, seconds) -> h.record(seconds, byOp[op.ordinal()]));
  }

  private static Attributes attributes(List<String> labels) {
    AttributesBuilder b = Attributes.builder();
    for (int i = 0; i < labels.size(); i += 2) {
      b.put(labels.get(i), labels.get(i + 1));
    }
    return b.build();
  }

  /**
   * The SDK's defaults, then {@code otel.resource.attributes} / {@code OTEL_RESOURCE_ATTRIBUTES} and
   * {@code otel.service.name} / {@code OTEL_SERVICE_NAME} as the OpenTelemetry SDK reads them, and
   * {@code service.instance.id} = the holder id unless set there: two JVMs contending for one lock export the same
   * series and must stay apart.
   */
  public static Resource resource(Properties props, Map<String, String> env, String holderId) {
    AttributesBuilder b = Attributes.builder();
    String attrs = firstSet(props.getProperty("otel.resource.attributes"), env.get("OTEL_RESOURCE_ATTRIBUTES"));
    Map<String, String> given = Map.of();
    if (attrs != null) {
      try {
        given = NameValueList.parse(attrs);
      } catch (IllegalArgumentException e) {
        LOG.warn("otel.resource.attributes ignored: " + e.getMessage());
      }
    }
    given.forEach(b::put);
    String service = firstSet(props.getProperty("otel.service.name"), env.get("OTEL_SERVICE_NAME"));
    if (service != null) {
      b.put("service.name", service.trim());
    }
    if (!given.containsKey("service.instance.id")) {
      b.put("service.instance.id", holderId);
    }
    return Resource.getDefault().merge(Resource.create(b.build()));
  }

  private static String firstSet(String a, String b) {
    return a != null && !a.isBlank() ? a : b != null && !b.isBlank() ? b : null;
  }

  /**
   * Flushes the last values and stops, waiting at most {@code timeoutMillis}: a collector that does not answer must
   * not hold up the JVM's exit.
   */
  public void shutdown(long timeoutMillis) {
    try {
      provider.shutdown().join(Math.max(0, timeoutMillis), TimeUnit.MILLISECONDS);
    } finally {
      sender.shutdownNow();
    }
  }

  /**
   * The SDK logs through java.util.logging (export failures, mostly): into the agent's log instead of the
   * application's JUL handlers. The logger name is the relocated package in the agent jar.
   */
  private static synchronized void routeSdkLogging() {
    if (sdkLogger != null) {
      return;
    }
    Logger logger = Logger.getLogger(OpenTelemetry.class.getPackageName().replaceFirst("\\.api$", ""));
    logger.setUseParentHandlers(false);
    logger.setLevel(AgentLog.enabled(AgentLog.Level.DEBUG) ? Level.FINE : Level.INFO);
    logger.addHandler(new Handler() {
      private final SimpleFormatter formatter = new SimpleFormatter();

      @Override
      public void publish(LogRecord r) {
        String msg = "OTLP export: " + formatter.formatMessage(r);
        if (r.getLevel().intValue() >= Level.WARNING.intValue()) {
          LOG.warn(msg, r.getThrown());
        } else {
          LOG.debug(msg);
        }
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    });
    sdkLogger = logger;
  }
}
