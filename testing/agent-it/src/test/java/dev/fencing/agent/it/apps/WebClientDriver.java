package dev.fencing.agent.it.apps;

import java.time.Duration;
import org.springframework.http.HttpMethod;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * Spring WebClient on Reactor Netty (ReactorClientHttpConnector), as a Spring service would call another: the status
 * of one exchange, or its error (WebClient's own wrapping: WebClientRequestException for a request that never got a
 * response). Loaded only when the app is asked for WEBCLIENT, so the app runs without Spring otherwise.
 */
final class WebClientDriver {
  private WebClientDriver() {}

  private static final WebClient CLIENT = WebClient.builder()
      .clientConnector(new ReactorClientHttpConnector(ReactorNettyApp.CLIENT)).defaultHeader("X-App", "1").build();

  static int exchange(String method, String url) {
    WebClient.RequestBodySpec spec = CLIENT.method(HttpMethod.valueOf(method)).uri(url);
    WebClient.RequestHeadersSpec<?> request = method.equals("GET") ? spec : spec.bodyValue("x");
    return request.retrieve().toBodilessEntity().block(Duration.ofSeconds(20)).getStatusCode().value();
  }
}
