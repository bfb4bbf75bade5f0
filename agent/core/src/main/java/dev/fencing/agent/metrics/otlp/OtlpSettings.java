package dev.fencing.agent.metrics.otlp;

import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.config.ConfigKey;
import dev.fencing.agent.config.NameValueList;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

/**
 * Where and how often the OTLP export goes, from the agent's own keys or, when those are unset, the standard
 * OpenTelemetry settings an application may already carry (for the OpenTelemetry Java agent or SDK).
 *
 * <p>Precedence, highest first: {@code fencing.otlp.*} (from any of the agent's configuration sources); then, per
 * OpenTelemetry's own rules, the metrics-specific setting before the generic one, each as a system property
 * ({@code otel.exporter.otlp.metrics.endpoint}) before its environment variable
 * ({@code OTEL_EXPORTER_OTLP_METRICS_ENDPOINT}). Headers from {@code otel.*} are only sent to an endpoint that also
 * came from {@code otel.*}: credentials meant for one collector never go to another. The {@code otel.*} endpoint is
 * ignored when {@code otel.sdk.disabled=true}, when {@code otel.metrics.exporter} does not list {@code otlp}, and
 * (with a warning) when its protocol is not {@code http/protobuf}, the only one the agent speaks.
 */
public record OtlpSettings(URI endpoint, Map<String, String> headers, Duration interval, String origin) {
  static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(60);
  private static final String METRICS_PATH = "v1/metrics";

  /** The settings (null when the export is off) and what to tell the operator about how they were chosen. */
  public record Resolution(OtlpSettings settings, List<String> warnings) {}

  public static Resolution resolve(AgentConfig config, Properties systemProperties, Map<String, String> env) {
    Otel otel = new Otel(systemProperties, env);
    List<String> warnings = new ArrayList<>();
    Duration interval = config.isSet(ConfigKey.OTLP_INTERVAL) ? config.otlpInterval() : otel.interval(warnings);
    if (config.otlpEndpoint() != null) {
      return new Resolution(new OtlpSettings(withMetricsPath(config.otlpEndpoint(), true), config.otlpHeaders(), interval,
          ConfigKey.OTLP_ENDPOINT.property()), warnings);
    }
    String[] specific = otel.get("otel.exporter.otlp.metrics.endpoint");
    String[] generic = specific == null ? otel.get("otel.exporter.otlp.endpoint") : null;
    String[] chosen = specific != null ? specific : generic;
    if (chosen == null) {
      return new Resolution(null, warnings);
    }
    String origin = chosen[1];
    String[] disabled = otel.get("otel.sdk.disabled");
    if (disabled != null && "true".equalsIgnoreCase(disabled[0].trim())) {
      warnings.add("OTLP export off: " + origin + " is set but " + disabled[1] + "=true");
      return new Resolution(null, warnings);
    }
    String[] exporters = otel.get("otel.metrics.exporter");
    if (exporters != null && !List.of(exporters[0].toLowerCase(Locale.ROOT).replace(" ", "").split(",")).contains("otlp")) {
      warnings.add("OTLP export off: " + origin + " is set but " + exporters[1] + "=" + exporters[0]);
      return new Resolution(null, warnings);
    }
    String[] protocol = otel.get("otel.exporter.otlp.metrics.protocol");
    protocol = protocol != null ? protocol : otel.get("otel.exporter.otlp.protocol");
    if (protocol != null && !"http/protobuf".equals(protocol[0].trim())) {
      warnings.add("OTLP export off: " + protocol[1] + "=" + protocol[0] + ", but the agent exports http/protobuf only;"
          + " set " + ConfigKey.OTLP_ENDPOINT.property() + " to an OTLP/HTTP receiver (usually port 4318)");
      return new Resolution(null, warnings);
    }
    URI uri;
    try {
      uri = new URI(chosen[0].trim());
      if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) || uri.getHost() == null) {
        throw new URISyntaxException(chosen[0], "not an http or https URL");
      }
    } catch (URISyntaxException e) {
      warnings.add("OTLP export off: " + origin + "='" + chosen[0] + "' is not an http or https URL");
      return new Resolution(null, warnings);
    }
    // The signal-specific endpoint is the full URL; the generic one is a base URL (OpenTelemetry's rule).
    URI endpoint = specific != null ? uri : withMetricsPath(uri, false);
    Map<String, String> headers = config.otlpHeaders();
    if (!config.isSet(ConfigKey.OTLP_HEADERS)) {
      String[] h = otel.get("otel.exporter.otlp.metrics.headers");
      h = h != null ? h : otel.get("otel.exporter.otlp.headers");
      if (h != null) {
        try {
          headers = NameValueList.parse(h[0]);
        } catch (IllegalArgumentException e) {
          warnings.add("OTLP headers ignored: " + h[1] + ": " + e.getMessage());
        }
      }
    }
    return new Resolution(new OtlpSettings(endpoint, headers, interval, origin), warnings);
  }

  /** base + /v1/metrics; with {@code keepFull}, a URL whose path already ends with it is kept as is. */
  static URI withMetricsPath(URI base, boolean keepFull) {
    String s = base.toString();
    if (keepFull && (s.endsWith("/" + METRICS_PATH) || s.endsWith("/" + METRICS_PATH + "/"))) {
      return base;
    }
    return URI.create(s.endsWith("/") ? s + METRICS_PATH : s + "/" + METRICS_PATH);
  }

  /** The otel.* settings: a system property, else its environment variable. */
  private static final class Otel {
    private final Properties props;
    private final Map<String, String> env;

    Otel(Properties props, Map<String, String> env) {
      this.props = props;
      this.env = env;
    }

    /** {value, where it came from}, or null when unset or blank. */
    String[] get(String property) {
      String v = props.getProperty(property);
      if (v != null && !v.isBlank()) {
        return new String[] {v, "system property " + property};
      }
      String var = property.toUpperCase(Locale.ROOT).replace('.', '_');
      v = env.get(var);
      if (v != null && !v.isBlank()) {
        return new String[] {v, "environment variable " + var};
      }
      return null;
    }

    Duration interval(List<String> warnings) {
      String[] v = get("otel.metric.export.interval");
      if (v == null) {
        return DEFAULT_INTERVAL;
      }
      try {
        long ms = Long.parseLong(v[0].trim());
        if (ms >= 100 && ms <= Duration.ofDays(1).toMillis()) {
          return Duration.ofMillis(ms);
        }
      } catch (NumberFormatException e) {
        // reported below
      }
      warnings.add(v[1] + "='" + v[0] + "' ignored: expected milliseconds from 100 to 86400000; exporting every "
          + DEFAULT_INTERVAL.toSeconds() + "s");
      return DEFAULT_INTERVAL;
    }
  }
}
