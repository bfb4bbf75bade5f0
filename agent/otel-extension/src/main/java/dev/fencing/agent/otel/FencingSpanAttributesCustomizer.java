package dev.fencing.agent.otel;

import io.opentelemetry.sdk.autoconfigure.spi.AutoConfigurationCustomizer;
import io.opentelemetry.sdk.autoconfigure.spi.AutoConfigurationCustomizerProvider;

/**
 * Registers {@link FencingSpanProcessor} with the OpenTelemetry agent's tracer provider. Found through
 * META-INF/services when the OpenTelemetry agent loads fencing-agent.jar as an extension.
 */
public final class FencingSpanAttributesCustomizer implements AutoConfigurationCustomizerProvider {
  @Override
  public void customize(AutoConfigurationCustomizer customizer) {
    customizer.addTracerProviderCustomizer((builder, config) -> builder.addSpanProcessor(new FencingSpanProcessor()));
  }
}
