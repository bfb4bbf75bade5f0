package dev.fencing.agent.metrics.otlp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.config.ConfigLoader;
import java.net.URI;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class OtlpSettingsTest {
  private final Properties sys = new Properties();
  private final Map<String, String> env = new HashMap<>();

  private OtlpSettings.Resolution resolve(String agentArgs) {
    Properties fencing = new Properties();
    AgentConfig config = ConfigLoader.load("lock=l" + (agentArgs.isEmpty() ? "" : "," + agentArgs), fencing, Map.of());
    assertThat(config.problems()).isEmpty();
    return OtlpSettings.resolve(config, sys, env);
  }

  @Test
  void offWhenNoEndpointIsConfigured() {
    sys.setProperty("otel.exporter.otlp.headers", "a=b");
    sys.setProperty("otel.metric.export.interval", "1000");
    assertThat(resolve("").settings()).isNull();
  }

  @Test
  void theAgentsOwnEndpointIsABaseUrlAndWinsOverOtelSettings() {
    sys.setProperty("otel.exporter.otlp.metrics.endpoint", "http://other:4318/v1/metrics");
    sys.setProperty("otel.exporter.otlp.headers", "Authorization=secret-for-other");
    OtlpSettings s = resolve("otlp.endpoint=http://collector:4318").settings();
    assertThat(s.endpoint()).isEqualTo(URI.create("http://collector:4318/v1/metrics"));
    assertThat(s.headers()).as("otel.* credentials never go to another collector").isEmpty();
    assertThat(s.interval()).isEqualTo(Duration.ofSeconds(60));
    assertThat(s.origin()).isEqualTo("fencing.otlp.endpoint");
    assertThat(resolve("otlp.endpoint=https://c/prefix/").settings().endpoint())
        .isEqualTo(URI.create("https://c/prefix/v1/metrics"));
    assertThat(resolve("otlp.endpoint=http://c:4318/v1/metrics").settings().endpoint())
        .isEqualTo(URI.create("http://c:4318/v1/metrics"));
  }

  @Test
  void agentHeadersAndIntervalApply() {
    sys.setProperty("otel.metric.export.interval", "1000");
    OtlpSettings s = resolve("otlp.endpoint=http://c:4318,otlp.headers=Authorization=Bearer%20x;y,otlp.interval=5s")
        .settings();
    assertThat(s.headers()).isEqualTo(Map.of("Authorization", "Bearer x;y"));
    assertThat(s.interval()).isEqualTo(Duration.ofSeconds(5));
  }

  @Test
  void otelGenericEndpointGetsTheMetricsPathAndItsHeadersAndInterval() {
    env.put("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318");
    env.put("OTEL_EXPORTER_OTLP_HEADERS", "api-key=a%2Cb,x=1+1");
    env.put("OTEL_METRIC_EXPORT_INTERVAL", "1500");
    OtlpSettings s = resolve("").settings();
    assertThat(s.endpoint()).isEqualTo(URI.create("http://collector:4318/v1/metrics"));
    assertThat(s.headers()).isEqualTo(Map.of("api-key", "a,b", "x", "1+1"));
    assertThat(s.interval()).isEqualTo(Duration.ofMillis(1500));
    assertThat(s.origin()).isEqualTo("environment variable OTEL_EXPORTER_OTLP_ENDPOINT");
  }

  @Test
  void metricsSpecificBeatsGenericAndSystemPropertyBeatsEnvironment() {
    sys.setProperty("otel.exporter.otlp.endpoint", "http://generic-sys:4318");
    env.put("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://specific-env:4318/custom");
    assertThat(resolve("").settings().endpoint()).as("the signal-specific URL is used as is")
        .isEqualTo(URI.create("http://specific-env:4318/custom"));
    sys.setProperty("otel.exporter.otlp.metrics.endpoint", "http://specific-sys:4318/m");
    assertThat(resolve("").settings().endpoint()).isEqualTo(URI.create("http://specific-sys:4318/m"));
  }

  @Test
  void agentHeadersGoWithAnOtelEndpointWhenSet() {
    env.put("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318");
    env.put("OTEL_EXPORTER_OTLP_HEADERS", "a=1");
    assertThat(resolve("otlp.headers=b=2").settings().headers()).isEqualTo(Map.of("b", "2"));
  }

  @Test
  void otelEndpointIgnoredWhenOtelSaysNoOtlpMetricsOrAnotherProtocol() {
    env.put("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4317");
    env.put("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc");
    OtlpSettings.Resolution r = resolve("");
    assertThat(r.settings()).isNull();
    assertThat(r.warnings()).singleElement().asString().contains("OTEL_EXPORTER_OTLP_PROTOCOL=grpc", "http/protobuf");
    env.put("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "http/protobuf");
    assertThat(resolve("").settings()).isNotNull();
    sys.setProperty("otel.metrics.exporter", "prometheus");
    assertThat(resolve("").settings()).isNull();
    sys.setProperty("otel.metrics.exporter", "logging, otlp");
    assertThat(resolve("").settings()).isNotNull();
    env.put("OTEL_SDK_DISABLED", "true");
    assertThat(resolve("").settings()).isNull();
    assertThat(resolve("otlp.endpoint=http://c:4318").settings()).as("the agent's own key is not OpenTelemetry's")
        .isNotNull();
  }

  @Test
  void invalidOtelValuesAreWarnedAboutNotFatal() {
    env.put("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318");
    OtlpSettings.Resolution r = resolve("");
    assertThat(r.settings()).isNull();
    assertThat(r.warnings()).singleElement().asString().contains("OTEL_EXPORTER_OTLP_ENDPOINT='collector:4318'");
    env.put("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318");
    env.put("OTEL_METRIC_EXPORT_INTERVAL", "10s");
    r = resolve("");
    assertThat(r.settings().interval()).isEqualTo(Duration.ofSeconds(60));
    assertThat(r.warnings()).singleElement().asString().contains("OTEL_METRIC_EXPORT_INTERVAL='10s'");
  }
}
